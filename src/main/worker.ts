// Worker process: pulls tasks from the shared Redis and runs them on inference threads.
// Run one per GPU (or several per node on CPU); SIGTERM drains.
import { ConfigError, loadConfig } from '../config/env.ts';
import { createLogger } from './logger.ts';
import { checkKeyLayout, createServices, onShutdown } from './services.ts';
import { createWorker } from './worker-root.ts';

try {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'worker');
  if (!config.redisUrl) throw new ConfigError('REDIS_URL is required for `npm run worker` (workers share the API\'s Redis); `npm start` runs everything with an embedded Redis');
  const services = createServices(config, config.redisUrl, log);
  await checkKeyLayout(config, services, log);
  const worker = createWorker(config, services, config.redisUrl, log);
  onShutdown(log, async () => {
    await worker.close();
    await services.close();
  });
  await worker.start();
  services.startBackground();
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : e);
  process.exit(1);
}
