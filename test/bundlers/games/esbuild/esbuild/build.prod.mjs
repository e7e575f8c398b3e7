import { copyFileSync, mkdirSync } from 'node:fs';
import * as esbuild from 'esbuild';

await esbuild.build({
  entryPoints: ['src/main.ts'],
  bundle: true,
  minify: true,
  sourcemap: false,
  target: ['chrome58', 'edge16', 'firefox57', 'safari11'],
  outfile: './dist/bundle.min.js',
  logLevel: 'warning',
});
mkdirSync('dist', { recursive: true });
copyFileSync('index.html', 'dist/index.html');
