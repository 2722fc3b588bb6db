// `npm start`: API and worker in one process (inference stays on worker threads, so HTTP is not
// blocked), on REDIS_URL or, when unset, a private embedded redis-server under DATA_DIR/redis.
import path from 'node:path';
import { ConfigError, loadConfig } from '../config/env.ts';
import { startEmbeddedRedis, type EmbeddedRedis } from './embedded-redis.ts';
import { createLogger } from './logger.ts';
import { closeApp } from '../api/app.ts';
import { checkKeyLayout, createServices, onShutdown } from './services.ts';
import { createApi } from './api-root.ts';
import { createWorker } from './worker-root.ts';

let embedded: EmbeddedRedis | undefined;
try {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'service');
  let redisUrl = config.redisUrl;
  if (!redisUrl) {
    embedded = await startEmbeddedRedis(path.join(config.dataDir, 'redis'));
    redisUrl = embedded.url;
    log.info({ redisUrl, dir: path.join(config.dataDir, 'redis') }, 'embedded redis-server started');
  }
  const services = createServices(config, redisUrl, log);
  await checkKeyLayout(config, services, log);
  const worker = createWorker(config, services, redisUrl, log);
  const app = await createApi(config, services);
  onShutdown(log, async () => {
    await closeApp(app);
    await worker.close();
    await services.close();
    await embedded?.stop();
  });
  await app.listen({ port: config.port, host: config.host });
  await worker.start();
  services.startBackground();
  log.info(
    { url: config.publicBaseUrl, versions: [...services.registry.versions.values()].map((v) => `${v.manifest.name} ${v.id}`) },
    'service ready',
  );
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : e);
  await embedded?.stop();
  process.exit(1);
}
