import type { BuildOptions } from 'esbuild';

export const BROWSER_TARGETS: string[];
export function lowerDestructuring(code: string): Promise<string>;
export const clientBuild: BuildOptions;
export const iifeBuild: BuildOptions;
export const forwardBuild: BuildOptions;
export const relayBuild: BuildOptions;
export const demoBuild: BuildOptions;
export const sizeBuild: (entry: string, target?: string | string[]) => BuildOptions;
