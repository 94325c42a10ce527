package index

import (
	"container/heap"
	"fmt"
	"math"
	"sync"
)

// vectorStore holds unit-length chunk vectors in one flat slice and answers
// nearest-neighbour queries by brute force (cosine similarity as a dot
// product). Brute force over 100,000 chunks of 768 dimensions is about 77M
// multiply-adds, tens of milliseconds on one core; past that an approximate
// index (HNSW) would be needed and is not built yet.
type vectorStore struct {
	mu   sync.RWMutex
	dims int
	ids  []string
	pos  map[string]int
	data []float32 // len(ids)*dims
}

func newVectorStore() *vectorStore { return &vectorStore{pos: map[string]int{}} }

func (s *vectorStore) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ids)
}

// put stores v (normalised to unit length) under id, replacing any old one.
func (s *vectorStore) put(id string, v []float32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(v) == 0 {
		return fmt.Errorf("vector for %s is empty", id)
	}
	if s.dims == 0 {
		s.dims = len(v)
	}
	if len(v) != s.dims {
		return fmt.Errorf("vector for %s has %d dimensions, the store has %d", id, len(v), s.dims)
	}
	u := normalize(v)
	if i, ok := s.pos[id]; ok {
		copy(s.data[i*s.dims:], u)
		return nil
	}
	s.pos[id] = len(s.ids)
	s.ids = append(s.ids, id)
	s.data = append(s.data, u...)
	return nil
}

// del removes id, moving the last vector into its place.
func (s *vectorStore) del(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.pos[id]
	if !ok {
		return
	}
	last := len(s.ids) - 1
	if i != last {
		s.ids[i] = s.ids[last]
		s.pos[s.ids[i]] = i
		copy(s.data[i*s.dims:(i+1)*s.dims], s.data[last*s.dims:])
	}
	s.ids = s.ids[:last]
	s.data = s.data[:last*s.dims]
	delete(s.pos, id)
	if len(s.ids) == 0 {
		s.dims = 0
	}
}

// scored is a chunk id with its similarity.
type scored struct {
	id    string
	score float64
}

// minHeap keeps the k best scores with the worst on top.
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// search returns the k chunks most similar to q, best first.
func (s *vectorStore) search(q []float32, k int) ([]scored, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.ids) == 0 || k <= 0 {
		return nil, nil
	}
	if len(q) != s.dims {
		return nil, fmt.Errorf("query vector has %d dimensions, the index has %d", len(q), s.dims)
	}
	u := normalize(q)
	h := make(minHeap, 0, k+1)
	for i := range s.ids {
		row := s.data[i*s.dims : (i+1)*s.dims]
		var dot float32
		for j, x := range row {
			dot += x * u[j]
		}
		if len(h) < k {
			heap.Push(&h, scored{s.ids[i], float64(dot)})
		} else if float64(dot) > h[0].score {
			h[0] = scored{s.ids[i], float64(dot)}
			heap.Fix(&h, 0)
		}
	}
	out := make([]scored, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scored)
	}
	return out, nil
}

func normalize(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	u := make([]float32, len(v))
	if sum == 0 {
		return u
	}
	n := float32(1 / math.Sqrt(sum))
	for i, x := range v {
		u[i] = x * n
	}
	return u
}
