    cg::{holder}<{type}> v{value};
    if (!c{channel}.read(v{value}))
      return 0;
