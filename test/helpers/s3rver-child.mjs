// Runs s3rver (the S3-protocol test double) in its own process and prints {"port":N} once it
// listens. Started by s3-server.ts with --openssl-legacy-provider: s3rver ciphers ListObjectsV2
// continuation tokens with DES, which Node's OpenSSL 3 only has in its legacy provider.
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true, configureBuckets: [{ name: bucket }] });
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.on('SIGTERM', () => void server.close().finally(() => process.exit(0)));
