, v{value}
