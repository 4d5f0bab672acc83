const {type}& input{index}
