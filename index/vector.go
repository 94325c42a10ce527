package index

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// vectorStore holds unit-length chunk vectors in one flat slice and answers
// nearest-neighbour queries (cosine similarity as a dot product). Up to
// approxThreshold vectors it scans them all: 100,000 chunks of 768
// dimensions are about 77M multiply-adds, tens of milliseconds on one core.
// Past that it builds an inverted-file index (IVF: k-means centroids, each
// vector listed under its nearest one) and scans only the lists of the
// centroids nearest the query.
type vectorStore struct {
	mu   sync.RWMutex
	dims int
	ids  []string
	pos  map[string]int
	data []float32 // len(ids)*dims

	threshold int  // approxThreshold, lower in tests
	ivf       *ivf // nil until the store outgrows threshold

	normMu sync.Mutex
	norms  map[string]float64 // file -> length of the sum of its vectors (see sumNorm)

	// score combines a file's centroid and best passage similarities
	// (fileScore by default; tests compare others).
	score func(centroid, best float64) float64
}

// fileScore is a file's semantic score: the whole file's similarity (its
// centroid's) plus its best passage's, as the keyword side adds a
// document score and a passage score.
func fileScore(centroid, best float64) float64 { return centroid + best }

// approxThreshold is the store size past which searches are approximate.
const approxThreshold = 100_000

func newVectorStore() *vectorStore {
	return &vectorStore{pos: map[string]int{}, threshold: approxThreshold, norms: map[string]float64{}, score: fileScore}
}

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
	s.forget(id)
	if i, ok := s.pos[id]; ok {
		copy(s.data[i*s.dims:], u)
		if s.ivf != nil {
			s.ivf.unlist(i)
			s.ivf.list(i, u)
		}
		return nil
	}
	s.pos[id] = len(s.ids)
	s.ids = append(s.ids, id)
	s.data = append(s.data, u...)
	if s.ivf != nil {
		s.ivf.list(len(s.ids)-1, u)
	}
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
	s.forget(id)
	last := len(s.ids) - 1
	if s.ivf != nil {
		s.ivf.unlist(i)
		if i != last {
			s.ivf.move(last, i)
		}
		s.ivf.assign = s.ivf.assign[:last]
	}
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
	if len(s.ids) < s.threshold/2 {
		s.ivf = nil // small again: exact search
	}
}

// forget drops the cached norm of the file of chunk id.
func (s *vectorStore) forget(id string) {
	path, _ := splitChunkID(id)
	s.normMu.Lock()
	delete(s.norms, path)
	s.normMu.Unlock()
}

// fileRank is a file's similarity to a query: its centroid's (the
// normalised sum of its passages' vectors) with its best passage's.
type fileRank struct {
	path  string
	score float64
	best  int // the best passage's number
}

// files ranks every file with an embedded passage by similarity to q,
// best first (past the IVF threshold, only those in the probed lists).
// The centroid's similarity is the sum of the passages' similarities over
// the length of the sum of their vectors, which is cached per file.
func (s *vectorStore) files(q []float32) ([]fileRank, error) {
	if err := s.prepare(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.ids) == 0 {
		return nil, nil
	}
	if len(q) != s.dims {
		return nil, fmt.Errorf("query vector has %d dimensions, the index has %d", len(q), s.dims)
	}
	u := normalize(q)
	type agg struct {
		sum, best float64
		seq       int
	}
	byFile := map[string]*agg{}
	consider := func(i int) {
		row := s.data[i*s.dims : (i+1)*s.dims]
		var dot float32
		for j, x := range row {
			dot += x * u[j]
		}
		path, seq := splitChunkID(s.ids[i])
		a := byFile[path]
		if a == nil {
			a = &agg{best: math.Inf(-1)}
			byFile[path] = a
		}
		a.sum += float64(dot)
		if float64(dot) > a.best {
			a.best, a.seq = float64(dot), seq
		}
	}
	if s.ivf != nil {
		for _, l := range s.ivf.probe(u) {
			for _, i := range s.ivf.lists[l] {
				consider(int(i))
			}
		}
	} else {
		for i := range s.ids {
			consider(i)
		}
	}
	out := make([]fileRank, 0, len(byFile))
	for path, a := range byFile {
		c := a.best
		if n := s.sumNorm(path); n > 0 {
			c = a.sum / n
		}
		out = append(out, fileRank{path: path, score: s.score(c, a.best), best: a.seq})
	}
	slices.SortFunc(out, func(a, b fileRank) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	return out, nil
}

// sumNorm returns the length of the sum of a file's passage vectors,
// computed once after the file's vectors change. s.mu is held for
// reading.
func (s *vectorStore) sumNorm(path string) float64 {
	s.normMu.Lock()
	defer s.normMu.Unlock()
	if n, ok := s.norms[path]; ok {
		return n
	}
	sum := make([]float64, s.dims)
	for seq := 0; ; seq++ {
		i, ok := s.pos[chunkID(path, seq)]
		if !ok {
			break
		}
		for j, x := range s.data[i*s.dims : (i+1)*s.dims] {
			sum[j] += float64(x)
		}
	}
	var n float64
	for _, x := range sum {
		n += x * x
	}
	n = math.Sqrt(n)
	s.norms[path] = n
	return n
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

// search returns the k chunks most similar to q, best first. Past the
// threshold the first search (and the first after the store doubled)
// builds the IVF index, which takes seconds.
func (s *vectorStore) search(q []float32, k int) ([]scored, error) {
	if err := s.prepare(); err != nil {
		return nil, err
	}
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
	consider := func(i int) {
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
	if s.ivf != nil {
		for _, l := range s.ivf.probe(u) {
			for _, i := range s.ivf.lists[l] {
				consider(int(i))
			}
		}
	} else {
		for i := range s.ids {
			consider(i)
		}
	}
	out := make([]scored, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scored)
	}
	return out, nil
}

// prepare builds the IVF index when the store has outgrown exact search.
func (s *vectorStore) prepare() error {
	s.mu.RLock()
	n := len(s.ids)
	stale := n > s.threshold && (s.ivf == nil || n > 2*s.ivf.builtAt)
	s.mu.RUnlock()
	if !stale {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.ids); n > s.threshold && (s.ivf == nil || n > 2*s.ivf.builtAt) {
		s.ivf = buildIVF(s.data, s.dims)
	}
	return nil
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

// ivf is an inverted-file index over the rows of a vectorStore.
type ivf struct {
	dims      int
	centroids []float32 // nlist*dims, unit length
	lists     [][]int32 // rows nearest each centroid
	assign    []int32   // row -> list
	builtAt   int       // rows when built
}

// Shape of the IVF index: about sqrt(n) lists, an eighth of them probed,
// k-means on a sample.
const (
	ivfProbeShare = 8
	ivfSample     = 20000
	ivfIters      = 6
)

// buildIVF clusters the rows of data with k-means (on a deterministic
// sample) and lists every row under its nearest centroid.
func buildIVF(data []float32, dims int) *ivf {
	n := len(data) / dims
	nlist := max(8, int(math.Sqrt(float64(n))))
	x := &ivf{dims: dims, builtAt: n, centroids: make([]float32, nlist*dims)}
	// Sample rows at a fixed stride; seed centroids at a second stride.
	stride := max(1, n/ivfSample)
	var sample []int
	for i := 0; i < n; i += stride {
		sample = append(sample, i)
	}
	for c := range nlist {
		r := sample[c*len(sample)/nlist]
		copy(x.centroids[c*dims:], data[r*dims:(r+1)*dims])
	}
	sums := make([]float64, nlist*dims)
	counts := make([]int, nlist)
	for range ivfIters {
		clear(sums)
		clear(counts)
		for _, r := range sample {
			c := x.nearest(data[r*dims : (r+1)*dims])
			counts[c]++
			for j, v := range data[r*dims : (r+1)*dims] {
				sums[c*dims+j] += float64(v)
			}
		}
		for c := range nlist {
			if counts[c] == 0 {
				continue // keep the old centroid
			}
			cen := make([]float32, dims)
			for j := range cen {
				cen[j] = float32(sums[c*dims+j])
			}
			copy(x.centroids[c*dims:], normalize(cen))
		}
	}
	x.lists = make([][]int32, nlist)
	x.assign = make([]int32, 0, n)
	for r := range n {
		x.list(r, data[r*dims:(r+1)*dims])
	}
	return x
}

// nearest returns the centroid most similar to v.
func (x *ivf) nearest(v []float32) int {
	best, bestDot := 0, float32(math.Inf(-1))
	for c := range len(x.centroids) / x.dims {
		var dot float32
		for j, w := range x.centroids[c*x.dims : (c+1)*x.dims] {
			dot += w * v[j]
		}
		if dot > bestDot {
			best, bestDot = c, dot
		}
	}
	return best
}

// probe returns the lists to scan for the unit query u.
func (x *ivf) probe(u []float32) []int {
	nlist := len(x.lists)
	type cd struct {
		c   int
		dot float32
	}
	all := make([]cd, nlist)
	for c := range nlist {
		var dot float32
		for j, w := range x.centroids[c*x.dims : (c+1)*x.dims] {
			dot += w * u[j]
		}
		all[c] = cd{c, dot}
	}
	slices.SortFunc(all, func(a, b cd) int {
		switch {
		case a.dot > b.dot:
			return -1
		case a.dot < b.dot:
			return 1
		}
		return 0
	})
	nprobe := max(1, nlist/ivfProbeShare)
	out := make([]int, nprobe)
	for i := range out {
		out[i] = all[i].c
	}
	return out
}

// list files row r (vector v) under its nearest centroid; r is either a
// new last row or a row just unlisted.
func (x *ivf) list(r int, v []float32) {
	c := x.nearest(v)
	x.lists[c] = append(x.lists[c], int32(r))
	if r == len(x.assign) {
		x.assign = append(x.assign, int32(c))
	} else {
		x.assign[r] = int32(c)
	}
}

// unlist removes row r from its list.
func (x *ivf) unlist(r int) {
	l := x.lists[x.assign[r]]
	if i := slices.Index(l, int32(r)); i >= 0 {
		l[i] = l[len(l)-1]
		x.lists[x.assign[r]] = l[:len(l)-1]
	}
}

// move renames row from to row to (the store moved its last row).
func (x *ivf) move(from, to int) {
	c := x.assign[from]
	if i := slices.Index(x.lists[c], int32(from)); i >= 0 {
		x.lists[c][i] = int32(to)
	}
	x.assign[to] = c
}
