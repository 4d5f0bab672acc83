std::tuple<{types}>
