    .max_in_flight = {max_in_flight},
