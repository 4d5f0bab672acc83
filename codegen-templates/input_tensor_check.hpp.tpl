I == {index}
