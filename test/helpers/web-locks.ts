/** The browser's Web Locks, as one origin's tabs share them: one holder per name, the others waiting in line. */
export function fakeLocks() {
  const lines = new Map<string, Array<() => Promise<unknown>>>();
  let requests = 0;
  const next = (name: string) => {
    const line = lines.get(name)!;
    const first = line[0];
    if (!first) return void lines.delete(name);
    void first().finally(() => {
      line.shift();
      next(name);
    });
  };
  const locks = {
    request(name: string, callback: () => Promise<unknown>) {
      requests++;
      return new Promise((resolve, reject) => {
        const line = lines.get(name) ?? lines.set(name, []).get(name)!;
        line.push(() => callback().then(resolve, reject));
        if (line.length === 1) next(name);
      });
    },
  };
  return { locks, requests: () => requests };
}
