package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/sandboxinit"
)

// An ordinary user's sandbox maps the user's own uid and gid and no other
// id, so the kernel cannot copy up (to change it) a file or directory
// owned by another id: EOVERFLOW. Two layouts are common where that
// bites, and nash handles both:
//
//   - a directory the user owns below directories of root's, inside one
//     overlay (/srv/app, /var/www/site, /opt/x): writing in it copies its
//     root-owned parents up first. nash plants those parents in the upper
//     dir before the run (plant), so nothing needs copying up: a
//     directory in the upper dir where one stands in the lower merges with
//     it. A planted directory, like the top of every overlay, is the
//     user's inside; its permission bits for its owner are set to what the
//     user may do there outside, so that the user can do there inside what
//     they could outside, no more.
//   - files and directories whose group is one of the user's
//     supplementary groups (a setgid team directory): where the system has
//     newgidmap and /etc/subgid grants the user those gids, nash maps them
//     into the sandbox too (mapGIDs).
//
// What still cannot work (a file of another user the user may write, a
// group the system does not let nash map) nash names before the run, with
// why (Warning), for the working directory and the paths the script names.

// Warning names a path the script may not be able to change in the sandbox
// as it could outside, and why. Run reports them before the script starts.
type Warning struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Warn sets a function Run calls, before the script starts, with what the
// script may not be able to change in the sandbox as it could outside.
func Warn(f func([]Warning)) Option { return func(s *Sandbox) { s.warn = f } }

// ids is who an ordinary user's sandbox maps.
type ids struct {
	uid, gid int
	// extra are the supplementary gids mapped too, through newgidmap.
	extra []int
	// groups are all the user's supplementary groups.
	groups []int
	// newgidmap is the helper's path, "" when the system has none.
	newgidmap string
	name      string // the user's name, for /etc/subgid
}

func (m *ids) uidMapped(uid uint32) bool { return int(uid) == m.uid }

func (m *ids) gidMapped(gid uint32) bool {
	return int(gid) == m.gid || slices.Contains(m.extra, int(gid))
}

// userIDs works out what the sandbox maps for the calling user; nil for
// root, whose sandbox maps every id.
func (s *Sandbox) userIDs() *ids {
	if os.Getuid() == 0 {
		return nil
	}
	if s.ids != nil {
		return s.ids
	}
	m := &ids{uid: os.Getuid(), gid: os.Getgid()}
	s.ids = m
	groups, _ := os.Getgroups()
	for _, g := range groups {
		if g != m.gid {
			m.groups = append(m.groups, g)
		}
	}
	if len(m.groups) == 0 {
		return m
	}
	if s.newgidmap == "" {
		if p, err := exec.LookPath("newgidmap"); err == nil {
			s.newgidmap = p
		}
	}
	if s.newgidmap == "-" {
		return m // tests: as on a system without it
	}
	m.newgidmap = s.newgidmap
	if u, err := user.LookupId(strconv.Itoa(m.uid)); err == nil {
		m.name = u.Username
	}
	if m.newgidmap != "" {
		m.extra = subordinate("/etc/subgid", m.name, m.uid, m.groups)
	}
	return m
}

// subordinate returns which of ids the subordinate-id file (/etc/subgid)
// grants the user, by name or uid.
func subordinate(file, name string, uid int, ids []int) []int {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(fields) != 3 || (fields[0] != name || name == "") && fields[0] != strconv.Itoa(uid) {
			continue
		}
		start, err1 := strconv.Atoi(fields[1])
		count, err2 := strconv.Atoi(fields[2])
		if err1 != nil || err2 != nil {
			continue
		}
		for _, id := range ids {
			if id >= start && id < start+count && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// mapGIDs writes the init's gid map: the user's gid and the supplementary
// gids /etc/subgid grants, through newgidmap; should that fail, the
// user's gid alone, as spawn maps it without newgidmap.
func mapGIDs(pid int, m *ids) error {
	args := []string{strconv.Itoa(pid), strconv.Itoa(m.gid), strconv.Itoa(m.gid), "1"}
	for _, g := range m.extra {
		args = append(args, strconv.Itoa(g), strconv.Itoa(g), "1")
	}
	cmd := exec.Command(m.newgidmap, args...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	m.extra = nil
	dir := "/proc/" + strconv.Itoa(pid)
	if err := os.WriteFile(dir+"/setgroups", []byte("deny"), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("map gids: newgidmap: %v (%s); setgroups: %w", err, strings.TrimSpace(string(out)), err)
	}
	if err := os.WriteFile(dir+"/gid_map", fmt.Appendf(nil, "%d %d 1\n", m.gid, m.gid), 0); err != nil {
		return fmt.Errorf("map gids: %w", err)
	}
	return nil
}

// accessBits are the permission bits (as for an owner: 0o7 << 6) that the
// user has on p outside the sandbox.
func accessBits(p string) uint32 {
	var bits uint32
	for _, a := range []struct {
		mode uint32
		bit  uint32
	}{{unix.R_OK, 0o400}, {unix.W_OK, 0o200}, {unix.X_OK, 0o100}} {
		if unix.Faccessat(unix.AT_FDCWD, p, a.mode, unix.AT_EACCESS) == nil {
			bits |= a.bit
		}
	}
	return bits
}

// dirAttrs gives a directory of the upper dir (an overlay's top, or a
// planted directory) the attributes that make it stand in for the live
// directory p, whose stat is st: its mode, and its group when the sandbox
// maps it. Its owner is the user: for a directory of another
// owner, the owner's permission bits become what the user may do there.
func dirAttrs(upper, p string, st *unix.Stat_t, m *ids) error {
	t := topAttrs(p, st, m)
	if t.GID >= 0 {
		if err := unix.Lchown(upper, -1, t.GID); err != nil {
			return fmt.Errorf("create layer dir: %w", err)
		}
	}
	if err := unix.Chmod(upper, t.Mode); err != nil {
		return fmt.Errorf("create layer dir: %w", err)
	}
	return nil
}

// topAttrs is what dirAttrs gives a directory standing in for p: for an
// upper dir the init makes (on the scratch tmpfs), the init applies it.
func topAttrs(p string, st *unix.Stat_t, m *ids) *sandboxinit.Top {
	t := &sandboxinit.Top{Mode: st.Mode & 0o7777, GID: -1}
	if !m.uidMapped(st.Uid) {
		t.Mode = t.Mode&^0o700 | accessBits(p)
	}
	if st.Gid != uint32(m.gid) && m.gidMapped(st.Gid) {
		t.GID = int(st.Gid)
	}
	return t
}

// plant prepares, for each path an ordinary user's script is expected to
// change (the working directory, and what the script names), the
// directories the overlay could not copy up on the way to it: from the
// overlay's top down to the deepest directory on the way that has an id
// the sandbox does not map, every directory is made in the upper dir. It
// returns the live paths of the planted directories. A layer whose upper
// dir the init makes on the run's scratch tmpfs (Scratch), where nash
// cannot plant before the run, is first given one on disk, in runDir.
func plant(layers []sandboxinit.Layer, paths []string, m *ids, runDir string) ([]string, error) {
	type dir struct {
		live, rel, upper string
		li               int
		st               unix.Stat_t
	}
	var plants []dir
	done := map[string]bool{}
	touched := map[int]bool{}
	for _, p := range paths {
		li := layerOf(layers, p)
		if li < 0 {
			continue
		}
		l := layers[li]
		// The chain of existing directories from p (or where it would
		// be made) up to below the top.
		var chain []dir
		for q := p; q != l.Point && under(q, l.Point); q = filepath.Dir(q) {
			var st unix.Stat_t
			if unix.Lstat(q, &st) != nil || !isDir(&st) {
				chain = nil // missing, or not a directory: start above it
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(q, l.Point), "/")
			chain = append(chain, dir{live: q, rel: rel, li: li, st: st})
		}
		deepest := -1
		for i, d := range chain {
			if !m.uidMapped(d.st.Uid) || !m.gidMapped(d.st.Gid) {
				deepest = i
				break
			}
		}
		if deepest < 0 {
			continue
		}
		touched[li] = true
		for i := len(chain) - 1; i >= deepest; i-- {
			if !done[chain[i].live] {
				done[chain[i].live] = true
				plants = append(plants, chain[i])
			}
		}
	}
	if len(plants) == 0 {
		return nil, nil
	}
	for li := range touched {
		if err := layerOnDisk(&layers[li], li, runDir, m); err != nil {
			return nil, err
		}
	}
	for i := range plants {
		plants[i].upper = filepath.Join(layers[plants[i].li].Upper, plants[i].rel)
	}
	// Made top down with room to make their children, then given their
	// attributes, which may take that room away, bottom up.
	for li := range touched {
		if err := unix.Chmod(layers[li].Upper, 0o700); err != nil {
			return nil, fmt.Errorf("create layer dir: %w", err)
		}
	}
	for _, d := range plants {
		if err := os.Mkdir(d.upper, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create layer dir: %w", err)
		}
	}
	slices.SortStableFunc(plants, func(a, b dir) int { return strings.Count(b.upper, "/") - strings.Count(a.upper, "/") })
	var planted []string
	for _, d := range plants {
		if err := dirAttrs(d.upper, d.live, &d.st, m); err != nil {
			return nil, err
		}
		ts := []unix.Timespec{d.st.Atim, d.st.Mtim}
		_ = unix.UtimesNanoAt(unix.AT_FDCWD, d.upper, ts, unix.AT_SYMLINK_NOFOLLOW)
		planted = append(planted, d.live)
	}
	for li := range touched {
		if err := matchTop(layers[li].Upper, layers[li].Point, m); err != nil {
			return nil, err
		}
	}
	slices.Sort(planted)
	return planted, nil
}

// layerOnDisk gives a layer on the scratch tmpfs (which the init makes)
// upper and work dirs on disk, in runDir, as the working directory's
// layer has: nash can then plant in it before the run.
func layerOnDisk(l *sandboxinit.Layer, i int, runDir string, m *ids) error {
	if !l.Scratch {
		return nil
	}
	l.Scratch, l.Top = false, nil
	l.Upper = filepath.Join(runDir, upperPrefix+strconv.Itoa(i))
	l.Work = filepath.Join(runDir, workPrefix+strconv.Itoa(i))
	for _, d := range []string{l.Upper, l.Work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fmt.Errorf("create layer dir: %w", err)
		}
	}
	return matchTop(l.Upper, l.Point, m)
}

// openUppers gives the user back, once the script has ended, the access
// to the tops of the upper dirs and the planted directories that dirAttrs
// took away, so that nash can read and move what is in them.
func openUppers(layers []sandboxinit.Layer, planted []string) {
	for _, l := range layers {
		openDir(l.Upper)
		for _, p := range planted {
			if under(p, l.Point) && p != l.Point {
				openDir(filepath.Join(l.Upper, strings.TrimPrefix(strings.TrimPrefix(p, l.Point), "/")))
			}
		}
	}
}

func openDir(p string) {
	var st unix.Stat_t
	if unix.Lstat(p, &st) == nil && isDir(&st) && st.Mode&0o700 != 0o700 {
		_ = unix.Chmod(p, st.Mode&0o7777|0o700)
	}
}

// layerOf returns the index of the overlay that holds p, or -1.
func layerOf(layers []sandboxinit.Layer, p string) int {
	best := -1
	for i, l := range layers {
		if under(p, l.Point) && (best < 0 || len(l.Point) > len(layers[best].Point)) {
			best = i
		}
	}
	return best
}

// expectedWrites lists the working directory and the literal paths the
// script writes, creates, deletes or changes, as the static analysis sees
// them (globs and paths known only at run time are left out, but for the
// directory a glob starts in).
func expectedWrites(script, dir string, env []string) []string {
	out := []string{dir}
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	rep, err := effects.Analyze(script, effects.Dir(dir), effects.Home(home))
	if err != nil {
		return out
	}
	for _, u := range rep.Paths {
		if u.Access == effects.Read || u.Dynamic || !filepath.IsAbs(u.Path) {
			continue
		}
		p := u.Path
		if u.Glob {
			p = filepath.Dir(p)
			for strings.ContainsAny(p, "*?[") {
				p = filepath.Dir(p)
			}
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// warnings names, among the paths, what the user may change outside but
// the sandbox cannot let them change.
func warnings(paths []string, m *ids) []Warning {
	var out []Warning
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		uidOK, gidOK := m.uidMapped(st.Uid), m.gidMapped(st.Gid)
		if uidOK && gidOK {
			continue
		}
		if !isDir(&st) {
			if accessBits(p)&0o200 == 0 {
				continue // not writable outside either
			}
			out = append(out, Warning{Path: p, Reason: "it cannot be changed in the sandbox: " + m.unmapped(&st)})
			continue
		}
		if gidOK || !slices.Contains(m.groups, int(st.Gid)) {
			continue // a planted directory: writable as outside
		}
		r := "its files of group " + groupName(st.Gid) + " cannot be changed in the sandbox"
		if st.Mode&unix.S_ISGID != 0 {
			r += ", and new files made in it get group " + groupName(uint32(m.gid)) + " there (and keep it when committed)"
		}
		out = append(out, Warning{Path: p, Reason: r + ": " + m.unmapped(&st)})
	}
	return out
}

// unmapped says why the sandbox does not map an object's ids.
func (m *ids) unmapped(st *unix.Stat_t) string {
	if !m.uidMapped(st.Uid) {
		return "it belongs to " + ownerName(st.Uid) + ", whom the sandbox of an ordinary user cannot map"
	}
	g := groupName(st.Gid)
	if !slices.Contains(m.groups, int(st.Gid)) {
		return "its group " + g + " is not one of yours"
	}
	line := fmt.Sprintf("%s:%d:1", m.name, st.Gid)
	if m.newgidmap == "" {
		return "the sandbox maps your supplementary group " + g + " only through newgidmap (Debian: the uidmap package), with the line " + line + " in /etc/subgid"
	}
	return "the sandbox maps your supplementary group " + g + " only when /etc/subgid grants it to you (the line " + line + ")"
}

func ownerName(uid uint32) string {
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		return u.Username
	}
	return "uid " + strconv.Itoa(int(uid))
}

func groupName(gid uint32) string {
	if g, err := user.LookupGroupId(strconv.Itoa(int(gid))); err == nil {
		return g.Name
	}
	return "gid " + strconv.Itoa(int(gid))
}
