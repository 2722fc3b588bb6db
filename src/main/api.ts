// API process: HTTP only. Never loads a model. Needs REDIS_URL (shared with the workers).
import { ConfigError, loadConfig } from '../config/env.ts';
import { createLogger } from './logger.ts';
import { closeApp } from '../api/app.ts';
import { checkKeyLayout, createServices, onShutdown } from './services.ts';
import { createApi } from './api-root.ts';

try {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'api');
  if (!config.redisUrl) throw new ConfigError('REDIS_URL is required for `npm run api` (the API and its workers share one Redis); `npm start` runs everything with an embedded Redis');
  const services = createServices(config, config.redisUrl, log);
  await checkKeyLayout(config, services, log);
  const app = await createApi(config, services);
  await app.listen({ port: config.port, host: config.host });
  services.startBackground();
  onShutdown(log, async () => {
    await closeApp(app);
    await services.close();
  });
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : e);
  process.exit(1);
}
