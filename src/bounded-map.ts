/**
 * A map of at most `capacity` entries that forgets the oldest first: the one bounded memory of a
 * server instance. Each per-instance memory is one: the remembered PKCE challenges
 * (`RecentPairs`), the personal tokens' last-use writes (`RecentWrites`), the wrong user codes
 * (`GuessLimiter`), the pending anonymous sign-in steps (`PendingAnonymous`) and the client ID
 * metadata document cache. Whatever a flood sends, each holds no more than its capacity.
 *
 * Oldest means first set: a `Map` keeps insertion order, and setting a key again moves it to the
 * end, so an entry in use stays while unused ones go.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  /**
   * `value` under `key` as the newest entry (a key already there moves to the end). Past the
   * capacity one entry is forgotten: the oldest, or with `evictable` the oldest it accepts (the
   * oldest of all when it accepts none). Returns the forgotten entry, if any.
   */
  set(key: K, value: V, evictable?: (value: V) => boolean): [K, V] | undefined {
    const entries = this.entries;
    entries.delete(key);
    entries.set(key, value);
    if (entries.size <= this.capacity) return undefined;
    let forgotten: [K, V] | undefined;
    if (evictable) {
      for (const entry of entries) {
        if (evictable(entry[1])) {
          forgotten = entry;
          break;
        }
      }
    }
    if (forgotten === undefined) {
      const oldest = entries.entries().next();
      if (oldest.done) return undefined; // cannot be: the map holds more than `capacity` entries
      forgotten = oldest.value;
    }
    entries.delete(forgotten[0]);
    return forgotten;
  }
}
