import { createServer, type Server } from 'node:http';

/** Serves `/healthz` (200 while the answer is ok, 503 otherwise) and 404 elsewhere, each with its JSON body. */
export const serveHealth = async (
  host: string,
  port: number,
  answer: () => { ok: boolean; body: unknown },
): Promise<Server> => {
  const server = createServer((req, res) => {
    const { ok, body } = answer();
    const health = req.url === '/healthz';
    res.writeHead(health ? (ok ? 200 : 503) : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
};
