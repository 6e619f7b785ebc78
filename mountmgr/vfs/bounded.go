package vfs

// boundedMap is a map of at most max entries (each call says max), for the caches of stored
// names (a directory's children, attribute names): a stored name never goes stale, so the only
// question is how many to keep. The caller locks.
type boundedMap[K comparable, V any] struct {
	m map[K]V
}

func (b *boundedMap[K, V]) get(k K) (V, bool) {
	v, ok := b.m[k]
	return v, ok
}

// add stores v under k unless the map is full; then it evicts nothing.
func (b *boundedMap[K, V]) add(k K, v V, max int) {
	if b.m == nil {
		b.m = make(map[K]V)
	}
	if len(b.m) < max {
		b.m[k] = v
	}
}

// put stores v under k, first evicting an eighth of the entries at random (map order) when
// the map is full: an iteration's start costs more than the deletes, so one per put made a
// full cache's eviction a profile entry of its own.
func (b *boundedMap[K, V]) put(k K, v V, max int) {
	if b.m == nil {
		b.m = make(map[K]V)
	} else if _, ok := b.m[k]; !ok && len(b.m) >= max {
		evict := max/8 + 1
		for old := range b.m {
			delete(b.m, old)
			if evict--; evict == 0 {
				break
			}
		}
	}
	b.m[k] = v
}
