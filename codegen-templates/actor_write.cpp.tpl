    if (!c{channel}.write(v{value}))
      return 0;
