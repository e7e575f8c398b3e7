/**
 * Event streams a test keeps open until it ends (`closeAll` in afterEach). Each Response is
 * held, not only its AbortController: undici cancels the body of a Response the garbage
 * collector takes, which closes the stream on the relay and frees its place under the caps.
 */
export function heldStreams() {
  const held = new Map<AbortController, Response>();
  return {
    /** Fetches `url` (a stream, or its refusal); `close` ends it. */
    async open(url: string, init: RequestInit = {}) {
      const controller = new AbortController();
      const response = await fetch(url, { ...init, signal: controller.signal });
      held.set(controller, response);
      return {
        response,
        close() {
          controller.abort();
          held.delete(controller);
        },
      };
    },
    closeAll(): void {
      for (const controller of held.keys()) controller.abort();
      held.clear();
    },
  };
}
