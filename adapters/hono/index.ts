/**
 * authgate for Hono. Not implemented yet (see the issue "Fastify and Hono adapters"): this
 * entry exists so the package's exports map is complete.
 * @packageDocumentation
 */
export {};
