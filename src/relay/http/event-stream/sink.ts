/**
 * Where an event stream's text goes: Node's response itself (node-sink.ts), or a web stream's
 * body when the relay runs without Node's response at hand (web-sink.ts).
 */
export interface EventSink {
  /** Writes text; false when the client is behind: write nothing more until the sink drains. */
  write(text: string): boolean;
  /** Ends the response as a response ends (the client sees the stream end and may reconnect). */
  end(): void;
  /**
   * Cuts the connection, dropping what was written and not read (a client that does not read
   * would otherwise hold its socket open on it): the client resumes from its Last-Event-ID.
   */
  drop(): void;
}

/** What a sink tells its stream. */
export interface SinkListener {
  /** The client read what was written: the stream may write again. */
  drained(): void;
  /** The client went away, or the response ended: called once. */
  closed(): void;
}
