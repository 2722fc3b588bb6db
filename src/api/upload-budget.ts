// A per-process budget of upload bytes in flight (UPLOAD_INFLIGHT_MAX_BYTES): a counting semaphore
// that never waits. A create-job reserves its body's size before reading it and gives it back when
// answered; a reservation that does not fit is refused (the route answers 503 with Retry-After),
// since a queued upload would still hold its connection and its client's bytes in socket buffers.
export class UploadBudget {
  private inFlight = 0;

  constructor(readonly maxBytes: number) {}

  /**
   * Reserves `bytes`; returns the release function (idempotent), or null when they do not fit. A
   * reservation above the whole budget is let in when nothing else is in flight, so a budget set
   * below the largest accepted body cannot shut uploads out altogether.
   */
  tryAcquire(bytes: number): (() => void) | null {
    if (this.inFlight > 0 && this.inFlight + bytes > this.maxBytes) return null;
    this.inFlight += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= bytes;
    };
  }

  get used(): number {
    return this.inFlight;
  }
}
