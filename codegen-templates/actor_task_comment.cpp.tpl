    // {call}  [{location}]
