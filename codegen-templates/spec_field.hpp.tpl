, .{field} = {value}
