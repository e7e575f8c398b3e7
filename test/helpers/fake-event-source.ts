/** EventSources a test drives: each connection made (`made`, with its URL), to open, cut or hand the relay's messages. */
export function fakeEventSources() {
  const made: Array<EventTarget & { url: string }> = [];
  class FakeSource extends EventTarget {
    constructor(readonly url: string) {
      super();
      made.push(this);
    }
    close() {}
  }
  return {
    Source: FakeSource as unknown as new (url: string) => EventSource,
    made,
    /** A message of `type` whose data is `data` as JSON, on every connection made. */
    send(type: string, data: unknown) {
      for (const s of made) s.dispatchEvent(Object.assign(new Event(type), { data: JSON.stringify(data) }));
    },
  };
}
