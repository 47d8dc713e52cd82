package dev.ratelimiter.rebalancer;

import tools.jackson.databind.json.JsonMapper;

/** The one JSON mapper of the application: mappers are thread-safe and costly to build, so they are shared. */
final class Json {

    static final JsonMapper MAPPER = JsonMapper.builder().build();

    private Json() {
    }
}
