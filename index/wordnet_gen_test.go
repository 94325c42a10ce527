package index

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wordnetGenerate, when set, makes TestGenerateWordNetTable write the
// synonym table of testdata/wordnet from WordNet 3.0 as Debian's
// wordnet-base installs it:
//
//	go test ./index -run TestGenerateWordNetTable -wordnet.generate=$PWD/testdata/wordnet/synonyms.txt.gz
var wordnetGenerate = flag.String("wordnet.generate", "", "write the WordNet synonym table to `FILE`")

// wordnetSenses is how many of a word's most frequent senses give it
// synonyms: the first only, since later senses are rarer and drift.
const wordnetSenses = 1

func TestGenerateWordNetTable(t *testing.T) {
	if *wordnetGenerate == "" {
		t.Skip("generator of testdata/wordnet/synonyms.txt.gz: run with -wordnet.generate=FILE")
	}
	const dir = "/usr/share/wordnet"
	syn := map[string][]string{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		words := map[string][]string{} // synset offset -> its words
		data, err := os.ReadFile(filepath.Join(dir, "data."+pos))
		if err != nil {
			t.Fatalf("%v (apt-get install wordnet-base)", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) < 4 || strings.HasPrefix(line, "  ") {
				continue
			}
			var n int
			fmt.Sscanf(f[3], "%x", &n)
			for i := 0; i < n && 4+2*i < len(f); i++ {
				w := strings.ToLower(f[4+2*i])
				if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: (a), (p), (ip)
					w = w[:j]
				}
				words[f[0]] = append(words[f[0]], w)
			}
		}
		index, err := os.ReadFile(filepath.Join(dir, "index."+pos))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(index), "\n") {
			f := strings.Fields(line)
			if len(f) < 6 || strings.HasPrefix(line, "  ") {
				continue
			}
			lemma := f[0]
			if !plainWord(lemma) {
				continue
			}
			var senses int
			fmt.Sscanf(f[2], "%d", &senses)
			offsets := f[len(f)-senses:]
			for _, off := range offsets[:min(wordnetSenses, len(offsets))] {
				for _, w := range words[off] {
					if w != lemma && plainWord(w) && !slices.Contains(syn[lemma], w) {
						syn[lemma] = append(syn[lemma], w)
					}
				}
			}
		}
	}
	var lemmas []string
	for l := range syn {
		lemmas = append(lemmas, l)
	}
	slices.Sort(lemmas)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	fmt.Fprintln(w, "# Derived from WordNet 3.0 (Debian wordnet-base 1:3.0-37): each word, then the other")
	fmt.Fprintln(w, "# single words of its most frequent sense. WordNet 3.0 Copyright 2006 by Princeton")
	fmt.Fprintln(w, "# University. All rights reserved. Licence: testdata/wordnet/LICENSE.")
	for _, l := range lemmas {
		fmt.Fprintf(w, "%s %s\n", l, strings.Join(syn[l], " "))
	}
	w.Flush()
	zw.Close()
	if err := os.WriteFile(*wordnetGenerate, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d words with synonyms, %d bytes", len(lemmas), buf.Len())
}

// plainWord reports whether w is one word of lower-case letters.
func plainWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
