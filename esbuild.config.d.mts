import type { BuildOptions } from 'esbuild';

export const clientBuild: BuildOptions;
export const iifeBuild: BuildOptions;
export const serverBuild: BuildOptions;
export const demoBuild: BuildOptions;
export const sizeBuild: (entry: string) => BuildOptions;
export const builds: BuildOptions[];
