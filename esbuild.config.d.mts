import type { BuildOptions } from 'esbuild';

export const BROWSER_TARGETS: string[];
export function lowerDestructuring(code: string): Promise<string>;
export const clientBuild: BuildOptions;
export const iifeBuild: BuildOptions;
export const forwardBuild: BuildOptions;
export const relayBuild: BuildOptions;
export const demoBuild: BuildOptions;
export const sizeBuild: (entry: string, target?: string | string[]) => BuildOptions;
export const adminBuild: BuildOptions;
/** What the relay's package ships beside its code: [from, to], paths from the repository's root. */
export const RELAY_PACKAGE_FILES: [string, string][];
