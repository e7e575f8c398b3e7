/** The relay's version, as /v1/health reports it. */
export const VERSION = '0.2.0';
