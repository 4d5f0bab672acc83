v{value}.value()
