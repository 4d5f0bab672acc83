input{index}
