// The benchmark's baseline: a bare graphql-yoga server (the gateway's yoga version) on node:http with a
// one-field schema, nothing else. Run by bench/run.ts in a process of its own: `node bench/bare-yoga.mjs`
// with PORT and HOST; stops on SIGTERM or SIGINT.
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }),
  logging: false,
  landingPage: false,
  graphiql: false,
});
const server = createServer(yoga);
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
const stop = () => server.close(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
