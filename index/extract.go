package index

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// Errors that say why a file was skipped. Callers test them with errors.Is;
// the Skipped records of an indexing run carry them as text.
var (
	// ErrBinary marks a file whose content is not text and has no extractor.
	ErrBinary = errors.New("binary content")
	// ErrTooLarge marks a file over the size cap.
	ErrTooLarge = errors.New("larger than the size cap")
	// ErrNotRegular marks a device, socket, FIFO or a symlink to a directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrCorrupt marks a document whose parser failed or panicked.
	ErrCorrupt = errors.New("corrupt document")
)

// Format names the extractor used for a file.
type Format string

// The formats Extract understands.
const (
	FormatText     Format = "text"
	FormatMarkdown Format = "markdown"
	FormatCode     Format = "code"
	FormatHTML     Format = "html"
	FormatPDF      Format = "pdf"
	FormatDOCX     Format = "docx"
	FormatODT      Format = "odt"
)

// Document is the text extracted from one file.
type Document struct {
	Format Format
	Title  string // first heading, <title>, a short first line, or empty
	// Headings are the document's section headings, in order: Markdown
	// and HTML headings, underlined lines and capitalised section names of
	// plain text.
	Headings []string
	Text     string
}

// maxPDFPages bounds the work spent on one PDF.
const maxPDFPages = 2000

// binaryExts are extensions skipped without reading the file.
var binaryExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true, ".ico": true, ".webp": true,
	".tiff": true, ".psd": true, ".mp3": true, ".mp4": true, ".mkv": true, ".avi": true, ".mov": true,
	".wav": true, ".flac": true, ".ogg": true, ".zip": true, ".gz": true, ".tgz": true, ".bz2": true,
	".xz": true, ".zst": true, ".7z": true, ".rar": true, ".tar": true, ".jar": true, ".class": true,
	".exe": true, ".dll": true, ".so": true, ".o": true, ".a": true, ".dylib": true, ".bin": true,
	".iso": true, ".img": true, ".woff": true, ".woff2": true, ".ttf": true, ".otf": true, ".pyc": true,
	".sqlite": true, ".db": true, ".wasm": true, ".deb": true, ".rpm": true,
}

// codeExts are extensions extracted as source code (plain text, no title).
var codeExts = map[string]bool{
	".go": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".rs": true,
	".py": true, ".js": true, ".ts": true, ".tsx": true, ".jsx": true, ".java": true, ".kt": true,
	".rb": true, ".php": true, ".sh": true, ".bash": true, ".zsh": true, ".fish": true, ".pl": true,
	".lua": true, ".swift": true, ".scala": true, ".cs": true, ".sql": true, ".r": true, ".hs": true,
	".ml": true, ".el": true, ".clj": true, ".ex": true, ".exs": true, ".erl": true, ".css": true,
	".scss": true, ".yaml": true, ".yml": true, ".toml": true, ".json": true, ".xml": true, ".ini": true,
	".mk": true, ".cmake": true, ".proto": true, ".vim": true, ".nix": true, ".tf": true,
}

// Extract turns the content of the file called name into text. The
// extractor is chosen by extension; unknown extensions are read as text when
// the content looks like text. A parser panic is recovered and reported as
// ErrCorrupt.
func Extract(name string, data []byte) (doc Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = Document{}, fmt.Errorf("%w: parser panic: %v", ErrCorrupt, r)
		}
	}()
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case ext == ".pdf":
		return extractPDF(data)
	case ext == ".docx":
		return extractZipXML(data, FormatDOCX, "word/document.xml")
	case ext == ".odt":
		return extractZipXML(data, FormatODT, "content.xml")
	case binaryExts[ext]:
		return Document{}, fmt.Errorf("%w: %s file", ErrBinary, ext)
	}
	if !looksLikeText(data) {
		return Document{}, ErrBinary
	}
	text := toValidUTF8(data)
	switch {
	case ext == ".html" || ext == ".htm" || ext == ".xhtml":
		title, body, heads := stripHTML(text)
		return Document{Format: FormatHTML, Title: title, Headings: heads, Text: body}, nil
	case ext == ".md" || ext == ".markdown" || ext == ".mdown":
		title, heads := textHeadings(text, true)
		return Document{Format: FormatMarkdown, Title: title, Headings: heads, Text: text}, nil
	case codeExts[ext]:
		return Document{Format: FormatCode, Text: text}, nil
	}
	title, heads := textHeadings(text, false)
	return Document{Format: FormatText, Title: title, Headings: heads, Text: text}, nil
}

// looksLikeText reports whether the first 8 KiB hold no NUL byte and are
// mostly valid UTF-8.
func looksLikeText(data []byte) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	bad := 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size <= 1 {
			// A rune cut at the 8 KiB boundary is not a fault.
			if len(head)-i < utf8.UTFMax && len(data) > len(head) {
				break
			}
			bad++
		} else if r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != '\f' && r != 0x1b {
			bad++
		}
		i += size
	}
	return bad*10 <= len(head) // at most 10% odd bytes (Latin-1 text passes)
}

func toValidUTF8(data []byte) string {
	if utf8.Valid(data) {
		return string(data)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// maxHeading bounds the length of a line taken for a heading or title.
const maxHeading = 100

// textHeadings finds the title and the section headings of Markdown or
// plain text. Headings are ATX lines (# Title, Markdown only), lines
// underlined with =, -, * or ~ (setext), and, in plain text, short lines
// in capitals at the margin (manual pages' NAME, DESCRIPTION). The title is
// Markdown's first heading, or the heading plain text starts with, else a
// short first line standing apart (a manual page's header).
func textHeadings(text string, markdown bool) (title string, heads []string) {
	lines := strings.Split(text, "\n")
	first := -1 // the first non-blank line
	inFence := false
	for i, raw := range lines {
		line := strings.TrimRight(raw, " \t\r")
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if first < 0 {
			first = i
		}
		if markdown && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
			inFence = !inFence
			continue
		}
		if inFence || len(t) > maxHeading {
			continue
		}
		h := ""
		switch {
		case markdown && strings.HasPrefix(t, "#"):
			h = strings.TrimSpace(strings.Trim(t, "#"))
		case i+1 < len(lines) && underline(strings.TrimSpace(lines[i+1]), len(t)):
			h = t
		case !markdown && line == t && capsHeading(t):
			h = t
		}
		if h == "" {
			continue
		}
		if title == "" && (i == first || markdown) {
			title = h // Markdown's first heading, or the text's opening one
		}
		heads = append(heads, h)
	}
	if title == "" && first >= 0 && first+2 < len(lines) && strings.TrimSpace(lines[first+1]) == "" &&
		strings.TrimSpace(strings.Join(lines[first+2:], "")) != "" {
		// A short first line standing apart from the text: a header.
		t := strings.TrimSpace(lines[first])
		if len(t) <= maxHeading && len(strings.Fields(t)) <= 12 {
			title = strings.Join(strings.Fields(t), " ")
		}
	}
	return title, heads
}

// underline reports whether u underlines a heading of length n: a run of
// one of = - * ~ at least three long and about as long as the heading.
func underline(u string, n int) bool {
	if len(u) < 3 || len(u) < n/2 || len(u) > 2*n+2 {
		return false
	}
	c := u[0]
	if c != '=' && c != '-' && c != '*' && c != '~' {
		return false
	}
	return strings.Count(u, string(c)) == len(u)
}

// capsHeading reports whether a line at the margin is a capitalised section
// name: letters, at most six words, no lower case, no sentence punctuation.
func capsHeading(t string) bool {
	if len(strings.Fields(t)) > 6 || strings.ContainsAny(t, ".,;:!?()[]{}<>=") {
		return false
	}
	letters := 0
	for _, r := range t {
		switch {
		case unicode.IsLower(r):
			return false
		case unicode.IsUpper(r):
			letters++
		}
	}
	return letters >= 3
}

// blockTags end a line when stripped from HTML.
var blockTags = map[string]bool{
	"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "pre": true, "section": true, "article": true, "table": true,
	"ul": true, "ol": true, "blockquote": true, "hr": true, "title": true, "td": true, "th": true,
}

// stripHTML returns the <title>, the visible text and the h1-h6 headings
// of an HTML page. It is a tolerant scanner, not a validating parser:
// unclosed tags end the text.
func stripHTML(s string) (title, text string, heads []string) {
	var b strings.Builder
	var tb, hb strings.Builder
	inTitle, inHead := false, false
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			lt = len(s)
		}
		chunk := html.UnescapeString(s[:lt])
		b.WriteString(chunk)
		if inTitle {
			tb.WriteString(chunk)
		}
		if inHead {
			hb.WriteString(chunk)
		}
		s = s[lt:]
		if s == "" {
			break
		}
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s, "-->")
			if end < 0 {
				break
			}
			s = s[end+3:]
			continue
		}
		gt := strings.IndexByte(s, '>')
		if gt < 0 {
			break
		}
		tag := s[1:gt]
		s = s[gt+1:]
		closing := strings.HasPrefix(tag, "/")
		name := strings.ToLower(strings.TrimLeft(tag, "/!?"))
		if i := strings.IndexAny(name, " \t\n\r/"); i >= 0 {
			name = name[:i]
		}
		switch {
		case !closing && (name == "script" || name == "style"):
			end := strings.Index(strings.ToLower(s), "</"+name)
			if end < 0 {
				s = ""
				continue
			}
			s = s[end:]
		case name == "title":
			inTitle = !closing
		case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
			inHead = !closing
			if closing {
				if h := strings.Join(strings.Fields(hb.String()), " "); h != "" && len(h) <= maxHeading {
					heads = append(heads, h)
				}
				hb.Reset()
			}
		}
		if blockTags[name] {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(tb.String()), " "), tidyLines(b.String()), heads
}

// tidyLines collapses runs of spaces within lines and runs of blank lines.
func tidyLines(s string) string {
	var b strings.Builder
	blank := true
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 0 {
			if !blank {
				b.WriteByte('\n')
			}
			blank = true
			continue
		}
		b.WriteString(strings.Join(f, " "))
		b.WriteByte('\n')
		blank = false
	}
	return b.String()
}

// extractZipXML reads the text of the XML member of an office document:
// DOCX (word/document.xml) or ODT (content.xml). Paragraphs end lines, tabs
// and breaks become whitespace.
func extractZipXML(data []byte, format Format, member string) (Document, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	var f *zip.File
	for _, zf := range zr.File {
		if zf.Name == member {
			f = zf
			break
		}
	}
	if f == nil {
		return Document{}, fmt.Errorf("%w: no %s in %s", ErrCorrupt, member, format)
	}
	rc, err := f.Open()
	if err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	defer rc.Close()
	// Bound decompression: a zip bomb must not exhaust memory.
	text, err := xmlText(io.LimitReader(rc, 64<<20), format)
	if err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	title := ""
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); t != "" {
			title = t
			break
		}
	}
	if len(title) > 200 {
		title = ""
	}
	return Document{Format: format, Title: title, Text: text}, nil
}

func xmlText(r io.Reader, format Format) (string, error) {
	dec := xml.NewDecoder(r)
	dec.Strict = false
	var b strings.Builder
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case format == FormatDOCX && t.Name.Local == "t":
				inText = true
			case t.Name.Local == "tab":
				b.WriteByte('\t')
			case t.Name.Local == "br" || t.Name.Local == "line-break":
				b.WriteByte('\n')
			case format == FormatODT && t.Name.Local == "s":
				b.WriteByte(' ')
			}
		case xml.EndElement:
			switch {
			case format == FormatDOCX && t.Name.Local == "t":
				inText = false
			case t.Name.Local == "p" || t.Name.Local == "h":
				b.WriteByte('\n')
			}
		case xml.CharData:
			if inText || format == FormatODT {
				b.Write(t)
			}
		}
	}
	return b.String(), nil
}

// extractPDF reads the text of each page with ledongthuc/pdf. The library
// panics on some malformed files (Extract recovers that) and loops forever
// on cyclic page trees, so pages are found by a bounded walk of our own
// rather than with Reader.Page.
func extractPDF(data []byte) (Document, error) {
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	pages, err := pdfPages(r.Trailer().Key("Root").Key("Pages"))
	if err != nil {
		return Document{}, err
	}
	var b strings.Builder
	for _, p := range pages {
		pdfPageText(&b, p)
		b.WriteByte('\n')
	}
	return Document{Format: FormatPDF, Text: toValidUTF8([]byte(b.String()))}, nil
}

// tjWordGap is the TJ adjustment, in thousandths of an em, read as a space
// between words: TeX and most typesetters move words apart with TJ numbers
// or Td moves instead of space characters, which the library's
// GetPlainText drops, gluing words together.
const tjWordGap = 180

// pdfPageText writes the text of a page: Tj/TJ strings decoded with their
// font, a space for large TJ gaps and horizontal moves, a newline for
// vertical moves.
func pdfPageText(b *strings.Builder, p pdf.Page) {
	fonts := map[string]pdf.TextEncoding{}
	for _, name := range p.Fonts() {
		f := p.Font(name)
		fonts[name] = f.Encoder()
	}
	var enc pdf.TextEncoding
	last := byte('\n')
	write := func(s string) {
		if s == "" {
			return
		}
		b.WriteString(s)
		last = s[len(s)-1]
	}
	space := func() {
		if last != ' ' && last != '\n' {
			write(" ")
		}
	}
	newline := func() {
		if last != '\n' {
			write("\n")
		}
	}
	show := func(raw string) {
		if enc == nil {
			write(raw)
			return
		}
		write(enc.Decode(raw))
	}
	y := 0.0 // the line's vertical position, enough to tell new lines
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT":
			space()
			y = 0 // BT resets the text matrix
		case "ET":
			space()
		case "Tf":
			if len(args) == 2 {
				enc = fonts[args[0].Name()]
			}
		case "Td", "TD":
			if len(args) == 2 {
				if ty := args[1].Float64(); ty != 0 {
					newline()
					y += ty
				} else {
					space()
				}
			}
		case "Tm":
			if len(args) == 6 {
				if f := args[5].Float64(); f != y {
					newline()
					y = f
				} else {
					space()
				}
			}
		case "T*":
			newline()
		case "Tj", "'", "\"":
			if op != "Tj" {
				newline()
			}
			if len(args) > 0 {
				show(args[len(args)-1].RawString())
			}
		case "TJ":
			if len(args) == 1 {
				v := args[0]
				for i := 0; i < v.Len(); i++ {
					x := v.Index(i)
					if x.Kind() == pdf.String {
						show(x.RawString())
					} else if x.Float64() <= -tjWordGap {
						space()
					}
				}
			}
		}
	})
}

// Bounds of the page tree walk.
const (
	maxPDFDepth = 32
	maxPDFNodes = 100000
)

// pdfPages lists the leaf pages of a page tree, at most maxPDFPages, and
// fails on trees deeper than maxPDFDepth (cycles) or on a page whose
// Parent chain does not end (which would hang the library's lookup of
// inherited resources).
func pdfPages(root pdf.Value) ([]pdf.Page, error) {
	var pages []pdf.Page
	nodes := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		nodes++
		if depth > maxPDFDepth || nodes > maxPDFNodes {
			return fmt.Errorf("%w: page tree too deep or cyclic", ErrCorrupt)
		}
		switch v.Key("Type").Name() {
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len() && len(pages) < maxPDFPages; i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		case "Page":
			p := v
			for n := 0; !p.IsNull(); n++ {
				if n > maxPDFDepth {
					return fmt.Errorf("%w: cyclic page parents", ErrCorrupt)
				}
				p = p.Key("Parent")
			}
			pages = append(pages, pdf.Page{V: v})
		}
		return nil
	}
	if err := walk(root, 0); err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("%w: no pages", ErrCorrupt)
	}
	return pages, nil
}
