package main

// A Mutant is one deliberate break of the cell protocol: Find, an exact
// snippet of File that must occur there exactly once, is replaced by Replace.
type Mutant struct {
	ID      string // short and stable: the name results are filed under
	Rule    string // the rule it breaks, named as in bounded.go's header
	File    string // relative to the module root
	Find    string
	Replace string
	What    string // one line: what the mutation breaks
}

// Rule names, as in the "Rules" list of bounded.go's header; the last
// three name the header's other sections, or none for a performance-only
// change.
const (
	ruleRoom      = "Room"
	ruleExpansion = "One expansion per receive ticket"
	ruleTicketed  = "The ticketed sender"
	ruleInWindow  = "The in-window parked sender"
	ruleClose     = "Close and the room"
	ruleGiveUp    = "Giving up a cell"
	ruleClaim     = "Claiming a registration"
	ruleRegister  = "Registrations (register, collect)"
	ruleLinz      = "Linearization points"
	rulePerf      = "none (performance)"
)

// ruleImplicit names the header's "Buffer end" section and its rule "Holes
// come after the switch": expansions are implicit until holesOn switches the
// channel, and every send that may give up its cell switches it first.
const ruleImplicit = "Implicit expansion before the first hole"

// ruleSecondLook names the rule "The second look": an implicit expansion
// only claims a sender already parked in its cell, so a plain sender that
// registers for room asks for room once more.
const ruleSecondLook = "The second look"

// ruleRejoin names the rule "Taking a cell back" of bounded.go's header.
const ruleRejoin = "Taking a cell back (rejoin)"

// ruleReuse names segment.go's section "Reuse": a segment is retired only
// once every party is done with its cells, and walks check every hop.
const ruleReuse = "Segment reuse (segment.go)"

// ruleRingWaiting names ring.go's section "Waiting" (its hand-offs to
// parked operations), and ruleSleeper sleep.go's sleeper.
const (
	ruleRingWaiting = "The ring's waiting (ring.go)"
	ruleSleeper     = "Sleeping and waking (sleep.go)"
)

// mutants is the list the tool runs, in order. Two are expected to be
// equivalent (no-spin-before-park, select-waits-rendezvous): they show that
// the tool tells a harmless change from a harmful one.
var mutants = []Mutant{
	// ===== Room =====
	{
		ID:      "room-b-le",
		Rule:    ruleRoom,
		File:    "bounded.go",
		Find:    "end := c.b.Load()\n\tif s >= end {",
		Replace: "end := c.b.Load()\n\tif s > end {",
		What:    "roomFor: the first cell past the buffer end B counts as room (s <= B)",
	},
	{
		ID:      "room-window-off",
		Rule:    ruleRoom,
		File:    "bounded.go",
		Find:    "if end = max(end, c.r.Load()+uint64(c.capacity)); s >= end {",
		Replace: "if end = max(end, c.r.Load()); s >= end {",
		What:    "roomFor: drops the R + capacity lower bound, so room while B lags an owed expansion is missed",
	},
	{
		ID:      "fullcheck-no-wait",
		Rule:    ruleRoom,
		File:    "bounded.go",
		Find:    "if c.capacity == 0 || r <= settled {",
		Replace: "if c.capacity == 0 || r <= settled || true {",
		What:    "fullCheck: a full verdict stands while an expansion is owed (B lags, e.g. past a hole)",
	},
	{
		ID:      "full-closing-no-await",
		Rule:    ruleRoom,
		File:    "ops.go",
		Find:    "case roomClosing:\n\t\t\t\tc.awaitClosed()\n\t\t\t\treturn ErrClosed",
		Replace: "case roomClosing:\n\t\t\t\treturn ErrClosed",
		What:    "trySend: a TrySend that met no room while a Close is under way fails as closed before Close takes effect",
	},

	// ===== One expansion per receive ticket =====
	{
		ID:      "restart-no-settle",
		Rule:    ruleExpansion,
		File:    "ops.go",
		Find:    "case outRestart:\n\t\t\tc.settle()",
		Replace: "case outRestart:",
		What:    "recvOp: a receive ticket whose hole was already paid never settles (settled < R forever)",
	},
	{
		ID:      "hole-no-expand",
		Rule:    ruleExpansion,
		File:    "ops.go",
		Find:    "\t\tc.expandFor(t, seg, false)\n",
		Replace: "\t\tif out != outHole {\n\t\t\tc.expandFor(t, seg, false)\n\t\t}\n",
		What:    "recvOp: a receive that made a hole good skips its expansion (the hole is never paid)",
	},
	{
		ID:      "expandcell-hole-done",
		Rule:    ruleExpansion,
		File:    "bounded.go",
		Find:    "if casMark(&cl.state, stCancelledSend, stHolePaid) {\n\t\t\t\treturn false",
		Replace: "if casMark(&cl.state, stCancelledSend, stHolePaid) {\n\t\t\t\treturn true",
		What:    "expandCell: an expansion that pays a hole counts it as buffer and takes no other ticket",
	},
	{
		ID:      "recvcell-never-pays",
		Rule:    ruleExpansion,
		File:    "bounded.go",
		Find:    "if st == stCancelledSend && casMark(&cl.state, stCancelledSend, stHoleSeen) {",
		Replace: "if false && st == stCancelledSend && casMark(&cl.state, stCancelledSend, stHoleSeen) {",
		What:    "recvCell: the hole's receiver never pays it; it settles and leaves the hole to the expansion",
	},
	{
		ID:      "closed-recv-expands",
		Rule:    ruleExpansion,
		File:    "ops.go",
		Find:    "case outClosed:\n\t\t\treturn zero, out",
		Replace: "case outClosed:\n\t\t\tc.expand(noPin)\n\t\t\treturn zero, out",
		What:    "recvOp: a receive that finds the channel closed in its cell runs an expansion it does not owe",
	},

	// ===== The ticketed sender =====
	{
		ID:      "ticketed-sender-off",
		Rule:    ruleTicketed,
		File:    "bounded.go",
		Find:    "return c.senderTicketed(r, closeAt)",
		Replace: "return false",
		What:    "waitsForSender: buffered-select receives give up a cell whose sender holds its ticket, and Try receives find no rule to wait by",
	},
	{
		ID:      "try-send-any-ticket",
		Rule:    ruleRoom,
		File:    "ops.go",
		Find:    "if t, k = c.claimSends(1); k == 0 {",
		Replace: "if t, k = c.s.Add(1)-1, 1; k == 0 {",
		What:    "sendOp: a Try send takes its ticket with a fetch-and-add, past the buffer's end when another send took the room it saw",
	},
	{
		ID:      "claim-room-seen-ahead",
		Rule:    ruleRoom,
		File:    "batch.go",
		Find:    "\t\tend := seen\n",
		Replace: "\t\tend := seen + 1\n",
		What:    "claimSends: takes one ticket past the end a send found, so a Try send, a select's send case or a batch claims a ticket without room",
	},
	{
		ID:      "try-send-rendezvous-no-room",
		Rule:    ruleRoom,
		File:    "bounded.go",
		Find:    "p.room || s < c.roomSeen.Load() || c.roomFor(s) {",
		Replace: "p.room || s < c.roomSeen.Load() || (c.roomFor(s) && (p.m != modeTry || c.capacity > 0)) {",
		What:    "sendCell: a Try send on a rendezvous channel does not count the receive holding its ticket as room, and finds no rule to go by",
	},
	{
		ID:      "try-recv-any-ticket",
		Rule:    ruleTicketed,
		File:    "ops.go",
		Find:    "if t = p.lookR; t >= c.recvEnd(p.lookS) || !c.r.CompareAndSwap(t, t+1) {",
		Replace: "if t = c.r.Add(1) - 1; false {",
		What:    "recvOp: a Try receive takes its ticket with a fetch-and-add, past S when another receive took the value it saw",
	},
	{
		ID:      "select-waits-rendezvous",
		Rule:    ruleTicketed,
		File:    "bounded.go",
		Find:    "case modeSelect:\n\t\tif c.capacity == 0 {\n\t\t\treturn false\n\t\t}",
		Replace: "case modeSelect:",
		What:    "waitsForSender: a select's receive case on a rendezvous channel also waits for a ticketed sender (expected harmless)",
	},
	{
		ID:      "await-sender-ignores-close",
		Rule:    ruleTicketed,
		File:    "bounded.go",
		Find:    "for i := 0; cl.state.Load() == st && r < c.closeAt.Load(); i++ {",
		Replace: "for i := 0; cl.state.Load() == st; i++ {",
		What:    "awaitSender: keeps waiting for a sender whose ticket Close put at or past closeAt (it never writes)",
	},
	{
		ID:      "sent-seen-ahead",
		Rule:    ruleTicketed,
		File:    "ops.go",
		Find:    "\tif r < seen {\n\t\treturn seen, false\n",
		Replace: "\tif r < seen+1 {\n\t\treturn seen + 1, false\n",
		What:    "sentFor: takes the kept count for one send ticket more than S had, so a Try receive through a Handle or a select case claims a ticket whose sender holds none",
	},
	{
		ID:      "sent-seen-empty",
		Rule:    ruleTicketed,
		File:    "ops.go",
		Find:    "\tif r < seen {\n",
		Replace: "\tif seen != 0 {\n",
		What:    "sentFor: the remembered count stands in for S past it too, so a Try receive through a Handle or a select case reports empty from an old count",
	},
	{
		ID:      "ctx-recv-withdraws-ticketed",
		Rule:    ruleTicketed,
		File:    "bounded.go",
		Find:    "if own.op == opRecv && c.senderTicketed(idx, c.closeAt.Load()) || own.op == opSend && c.asBuffered(idx, own) {",
		Replace: "if own.op == opSend && c.asBuffered(idx, own) {",
		What:    "await: a parked receive whose context fires withdraws although its cell's sender holds its ticket",
	},

	// ===== The in-window parked sender =====
	{
		ID:      "asbuffered-never",
		Rule:    ruleInWindow,
		File:    "bounded.go",
		Find:    "if w.isSel {\n\t\treturn false\n\t}\n\tif c.s.Load()&closedBit != 0 {\n\t\treturn idx < c.closedRoom()",
		Replace: "if true {\n\t\treturn false\n\t}\n\tif c.s.Load()&closedBit != 0 {\n\t\treturn idx < c.closedRoom()",
		What:    "asBuffered: constant false; a sender parked in the window withdraws on ctx, Close fails it, Len skips it",
	},
	{
		ID:      "asbuffered-open-off",
		Rule:    ruleInWindow,
		File:    "bounded.go",
		Find:    "return c.inWindow(idx)",
		Replace: "return false",
		What:    "asBuffered: while open, no parked sender counts as buffered (withdraws on ctx, Len skips it)",
	},
	{
		ID:      "len-skips-parked-sender",
		Rule:    ruleInWindow,
		File:    "close.go",
		Find:    "if st == stBuffered || st == stConsumed || (isWaiter(st) && st.op == opSend && c.asBuffered(idx, st)) {",
		Replace: "if st == stBuffered || st == stConsumed {",
		What:    "countValues: Len does not count a plain sender parked inside the buffer window",
	},

	// ===== Close and the room =====
	{
		ID:      "claimsender-skips-maydeliver",
		Rule:    ruleClose,
		File:    "bounded.go",
		Find:    "closed := !c.mayDeliver(seg.id.Load()<<segShift | uint64(i))",
		Replace: "closed := false",
		What:    "claimSender: a receiver or expansion delivers a parked send past the room Close read",
	},
	{
		ID:      "sendcell-skips-maydeliver",
		Rule:    ruleClose,
		File:    "bounded.go",
		Find:    "if !c.mayDeliver(s) {\n\t\t\t\t\tif c.giveUp(seg, i, st, opSend) {",
		Replace: "if false {\n\t\t\t\t\tif c.giveUp(seg, i, st, opSend) {",
		What:    "sendCell: a send that finds room after Close delivers although it had none at Close",
	},
	{
		ID:      "sendop-inline-skips-closed",
		Rule:    ruleClose,
		File:    "ops.go",
		Find:    "t < c.roomSeen.Load())) && c.s.Load()&closedBit == 0 && bufferInto(cl, st, v)",
		Replace: "t < c.roomSeen.Load())) && bufferInto(cl, st, v)",
		What:    "sendOp: the inline common case delivers after Close without asking mayDeliver",
	},
	{
		ID:      "recvop-look-skips-sender",
		Rule:    ruleImplicit,
		File:    "ops.go",
		Find:    "\t\t\t\t\t\tnotPoison(st)\n\t\t\t\t\t\tif isWaiter(st) && st.op == opSend {\n",
		Replace: "\t\t\t\t\t\tnotPoison(st)\n\t\t\t\t\t\tif false && isWaiter(st) && st.op == opSend {\n",
		What:    "recvOp: the inline implicit expansion leaves a sender parked in cell r + capacity unclaimed",
	},
	{
		ID:      "recvop-look-past-holes",
		Rule:    ruleImplicit,
		File:    "ops.go",
		Find:    "t >= h || h == holesSwitching || bs.id.Load() != b>>segShift",
		Replace: "h == holesSwitching || bs.id.Load() != b>>segShift",
		What:    "recvOp: the inline implicit expansion also stands for receive tickets past the switch to explicit expansions",
	},
	{
		ID:      "batch-inline-skips-closed",
		Rule:    ruleClose,
		File:    "batch.go",
		Find:    "(st == nil || st == stInBuffer) && c.s.Load()&closedBit == 0 && bufferInto(cl, st, vs[n])",
		Replace: "(st == nil || st == stInBuffer) && bufferInto(cl, st, vs[n])",
		What:    "sendBatch: the inline common case delivers after Close without asking mayDeliver",
	},
	{
		ID:      "bufferinto-publishes-first",
		Rule:    ruleLinz,
		File:    "bounded.go",
		Find:    "\tcl.elem = v\n\tsched.Point()                             // value written, not published\n\treturn casMark(&cl.state, st, stBuffered)",
		Replace: "\tok := casMark(&cl.state, st, stBuffered)\n\tcl.elem = v\n\treturn ok",
		What:    "bufferInto: the cell is published as buffered before its value is written",
	},
	{
		ID:      "doomed-recv-gt",
		Rule:    ruleClose,
		File:    "bounded.go",
		Find:    "return idx >= c.closeAt.Load()",
		Replace: "return idx > c.closeAt.Load()",
		What:    "doomed: a receive registered exactly at closeAt after Close's walk does not see Close (parks forever)",
	},
	{
		ID:      "beginclose-no-announce",
		Rule:    ruleClose,
		File:    "close.go",
		Find:    "c.roomEnd.CompareAndSwap(openMark, closingMark) // open → closing: full verdicts wait for the OR",
		Replace: "// (mutant: no open → closing announcement)",
		What:    "beginClose: roomEnd stays open until stored, so full verdicts inside Close stand and closedRoom reads openMark",
	},
	{
		ID:      "fullcheck-ignores-close",
		Rule:    ruleClose,
		File:    "bounded.go",
		Find:    "if c.roomEnd.Load() != openMark {\n\t\treturn roomClosing\n\t}",
		Replace: "",
		What:    "fullCheck: a full verdict given while a Close is under way stands (roomEnd not checked)",
	},
	{
		ID:      "close-room-ignores-b",
		Rule:    ruleClose,
		File:    "close.go",
		Find:    "end = max(end, c.b.Load())",
		Replace: "end = max(end, end)",
		What:    "beginClose: the room Close reads ignores B, so sends that had room below B fail after Close",
	},
	{
		ID:      "close-walk-fails-buffered",
		Rule:    ruleClose,
		File:    "close.go",
		Find:    "if !c.asBuffered(idx, st) && claim(seg, i, st, stCancelledSend) {",
		Replace: "if claim(seg, i, st, stCancelledSend) {",
		What:    "finishClose: Close's walk fails plain senders parked below the room it read (counted as buffered)",
	},

	// ===== Giving up a cell =====
	{
		ID:      "giveup-no-drop",
		Rule:    ruleGiveUp,
		File:    "bounded.go",
		Find:    "seg.cancelled(op == opSend)\n\tif op == opSend {\n\t\tdrop(cl)\n\t}",
		Replace: "seg.cancelled(op == opSend)",
		What:    "giveUp: a sender that gives its cell up keeps its value referenced from the cell",
	},

	// ===== Claiming a registration =====
	{
		ID:      "claim-ignores-selcommit",
		Rule:    ruleClaim,
		File:    "bounded.go",
		Find:    "if selCommit(w) {\n\t\tsched.Point()\n\t\tstoreMark(&c.state, next) // resuming → next",
		Replace: "if selCommit(w) || true {\n\t\tsched.Point()\n\t\tstoreMark(&c.state, next) // resuming → next",
		What:    "claim: completes a select case although the select went with another case (or is registering)",
	},
	{
		ID:      "selclaim-commits-registering",
		Rule:    ruleClaim,
		File:    "waiter.go",
		Find:    "if s.state.CompareAndSwap(selReg, selDirty) {\n\t\t\t\treturn false",
		Replace: "if s.state.CompareAndSwap(selReg, to) {\n\t\t\t\treturn true",
		What:    "selClaim: a claimer commits a select that is still registering (its own registration may commit it too)",
	},
	{
		ID:      "failreceiver-no-wake",
		Rule:    ruleClaim,
		File:    "bounded.go",
		Find:    "s.cancelled(false)\n\t\t\tw.wakeUp(resRestart)",
		Replace: "s.cancelled(false)",
		What:    "failReceiver: a plain receiver told to restart (its sender failed after Close) is never woken",
	},

	// ===== Registrations =====
	{
		ID:      "register-no-kick",
		Rule:    ruleRegister,
		File:    "bounded.go",
		Find:    "kickPending(&c.selfPending, p.sc) // after registering: see select.go, register",
		Replace: "// (mutant: no kickPending)",
		What:    "register: an operation that parks does not kick a select waiting with a deferred case",
	},
	{
		ID:      "collect-no-clear",
		Rule:    ruleRegister,
		File:    "bounded.go",
		Find:    "v := cl.elem // the sender wrote it before its claim\n\tcl.elem = zero",
		Replace: "v := cl.elem // the sender wrote it before its claim",
		What:    "collect: a parked receiver takes its value but leaves it referenced from the cell",
	},
	{
		ID:      "tryrecv-empty-off-by-one",
		Rule:    ruleLinz,
		File:    "ops.go",
		Find:    "if r >= sw&counterMask {",
		Replace: "if r+1 >= sw&counterMask {",
		What:    "tryRecv: the empty check is off by one, so a channel holding one value looks empty",
	},

	// ===== Implicit expansion before the first hole =====
	{
		ID:      "holeson-off-await",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "if own.op == opSend {\n\t\tc.holesOn() // before the room check that may give the cell up\n\t}\n",
		Replace: "",
		What:    "await: a parked sender whose context fires withdraws outside the window without switching",
	},
	{
		ID:      "holeson-off-select",
		Rule:    ruleImplicit,
		File:    "ops.go",
		Find:    "if p.m == modeSelect {\n\t\tc.holesOn() // the case may be withdrawn inside the buffer: a hole\n\t}\n",
		Replace: "",
		What:    "sendOp: a select's send case registers without switching; withdrawn, it leaves a hole while expansions are implicit",
	},
	{
		ID:      "holeson-off-close",
		Rule:    ruleImplicit,
		File:    "close.go",
		Find:    "c.holesOn()                                     // Close fails the sends past the room it reads below\n",
		Replace: "",
		What:    "beginClose: Close reads the room without switching; the senders it fails leave holes while expansions are implicit",
	},
	{
		ID:      "holeson-r-before-cas",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "if h == noHoles && c.holeFrom.CompareAndSwap(noHoles, holesSwitching) {\n\t\t\t// Receivers that load holeFrom from here on wait for the store\n\t\t\t// below, so those whose tickets are at or past r see it.\n\t\t\tsched.Point()\n\t\t\tr := c.r.Load()",
		Replace: "r := c.r.Load()\n\t\tsched.Point()\n\t\tif h == noHoles && c.holeFrom.CompareAndSwap(noHoles, holesSwitching) {",
		What:    "holesOn: loads R0 before the switch begins, so a receive with ticket R0 may still expand implicitly (never settled)",
	},
	{
		ID:      "holeson-no-switching",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "if h == noHoles && c.holeFrom.CompareAndSwap(noHoles, holesSwitching) {\n\t\t\t// Receivers that load holeFrom from here on wait for the store\n\t\t\t// below, so those whose tickets are at or past r see it.\n\t\t\tsched.Point()\n\t\t\tr := c.r.Load()\n\t\t\tc.b.Store(r + uint64(c.capacity)) // B was the capacity: nobody took a ticket from it\n\t\t\tc.settled.Store(r)                // after B: fullCheck loads settled, then B\n\t\t\tc.holeFrom.Store(r)\n\t\t\treturn\n\t\t}",
		Replace: "if h == noHoles {\n\t\t\tr := c.r.Load()\n\t\t\tif !c.holeFrom.CompareAndSwap(noHoles, r) {\n\t\t\t\tcontinue\n\t\t\t}\n\t\t\tsched.Point()\n\t\t\tc.b.Store(r + uint64(c.capacity))\n\t\t\tc.settled.Store(r)\n\t\t\treturn\n\t\t}",
		What:    "holesOn: publishes R0 in holeFrom with no switching step, before B and settled are set",
	},
	// The next two are expected to survive. fullcheck-noholes-early is
	// equivalent: a load of holeFrom = noHoles after the load of R comes
	// before every Close's holesOn, so before that Close reads the room and
	// sets its bit, and the verdict stands at the load of R. In
	// fullcheck-holefrom-before-r the switch, a hole and a receive's ticket
	// must all fall between two adjacent loads, where no replay can stop
	// fullCheck and no schedule point widens the window.
	{
		ID:      "fullcheck-noholes-early",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "\tif c.roomEnd.Load() != openMark {\n\t\treturn roomClosing\n\t}\n\tif c.capacity == 0 || r <= settled {\n\t\treturn roomNo\n\t}\n\tif c.holeFrom.Load() == noHoles {",
		Replace: "\tif c.capacity > 0 && c.holeFrom.Load() == noHoles {\n\t\treturn roomNo\n\t}\n\tif c.roomEnd.Load() != openMark {\n\t\treturn roomClosing\n\t}\n\tif c.capacity == 0 || r <= settled {\n\t\treturn roomNo\n\t}\n\tif false {",
		What:    "fullCheck: the noHoles full verdict is taken before the roomEnd and settled checks (argued equivalent)",
	},
	{
		ID:      "fullcheck-holefrom-before-r",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "\tr := c.r.Load()\n\tif s < r+uint64(c.capacity) {\n\t\treturn roomYes\n\t}\n\tif c.roomEnd.Load() != openMark {\n\t\treturn roomClosing\n\t}\n\tif c.capacity == 0 || r <= settled {\n\t\treturn roomNo\n\t}\n\tif c.holeFrom.Load() == noHoles {",
		Replace: "\th := c.holeFrom.Load()\n\tr := c.r.Load()\n\tif s < r+uint64(c.capacity) {\n\t\treturn roomYes\n\t}\n\tif c.roomEnd.Load() != openMark {\n\t\treturn roomClosing\n\t}\n\tif c.capacity == 0 || r <= settled {\n\t\treturn roomNo\n\t}\n\tif h == noHoles {",
		What:    "fullCheck: loads holeFrom before R, so a switch, a hole and a receive between the loads give a full verdict with room",
	},
	{
		ID:      "implicit-no-own-fallback",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "\t\tif rid >= id {\n\t\t\tfrom = own\n\t\t}",
		Replace: "\t\tif rid > id {\n\t\t\treturn\n\t\t}\n\t\tif rid == id {\n\t\t\tfrom = own\n\t\t}",
		What:    "expandImplicit: a bufSeg root past its target is taken for the target removed, and the parked sender there is not claimed",
	},
	{
		ID:      "no-second-look",
		Rule:    ruleSecondLook,
		File:    "bounded.go",
		Find:    "if p.m != modePark || c.capacity <= 0 || !c.roomFor(s) {",
		Replace: "if true {",
		What:    "sendCell: a sender that registered for room does not look at the room again, so a receive whose expansion looked first leaves it parked",
	},
	{
		ID:      "second-look-ignores-close",
		Rule:    ruleSecondLook,
		File:    "bounded.go",
		Find:    "\tif !c.claimSender(seg, i, p.own, stBuffered) {\n\t\treturn false\n\t}\n\tputWaiter(p.own, p.pooled, &sendWaiters)",
		Replace: "\tif !seg.cell(i).state.CompareAndSwap(p.own, stBuffered) {\n\t\treturn false\n\t}\n\tputWaiter(p.own, p.pooled, &sendWaiters)",
		What:    "secondLook: claims its own registration with one CompareAndSwap, without Close's bound, so a send into a buffer that was full at Close delivers after it",
	},
	{
		ID:      "implicit-tail-skips-linked",
		Rule:    ruleSecondLook,
		File:    "bounded.go",
		Find:    "\t\tfrom := seg\n",
		Replace: "\t\tfrom := seg\n\t\tif rid < id {\n\t\t\treturn\n\t\t}\n",
		What:    "expandImplicit: skips every cell past the bufSeg root's segment, also where a sender is parked there",
	},
	{
		ID:      "sendregs-uncounted",
		Rule:    ruleSecondLook,
		File:    "bounded.go",
		Find:    "\t\t\t\tseg.sendRegs.Add(1) // before registering: see \"Buffer end\"\n",
		Replace: "\t\t\t\t_ = seg.sendRegs.Load()\n",
		What:    "sendCell: a sender registers for room without counting itself in sendRegs, so implicit expansions skip its cell",
	},
	{
		ID:      "sendregs-after-register",
		Rule:    ruleSecondLook,
		File:    "bounded.go",
		Find:    "\t\t\t\tseg.sendRegs.Add(1) // before registering: see \"Buffer end\"\n",
		Replace: "\t\t\t\tdefer seg.sendRegs.Add(1)\n",
		What:    "sendCell: a sender counts itself in sendRegs after its second look, so an expansion between the two skips a parked sender that found no room",
	},
	{
		ID:      "recvop-sendregs-inverted",
		Rule:    ruleSecondLook,
		File:    "ops.go",
		Find:    "\t\t\t\t\t} else if bs.sendRegs.Load() != 0 {\n",
		Replace: "\t\t\t\t\t} else if bs.sendRegs.Load() == 0 {\n",
		What:    "recvOp: the written-out implicit expansion looks at cell b only where no send has registered, and skips a parked sender",
	},
	// ===== Taking a cell back =====
	{
		ID:      "rejoin-unchecked",
		Rule:    ruleRejoin,
		File:    "bounded.go",
		Find:    "\tif c.s.Load() > idx {\n\t\treturn false // the cell's sender has its ticket: a busy channel, where a fresh ticket serves\n\t}\n\tif !seg.hold(idx >> segShift) {\n\t\treturn false // retired, removed, or in a later life\n\t}\n\tdefer seg.release()\n\tseg.counts.Add(^uint64(cancelledRecvOne - 1)) // the cell no longer counts as given up (held: no removal)\n\tcl := seg.cell(int(idx & segMask))\n\tp.bindSelect()\n\t// After the first look: the cell's sender may take its ticket here and\n\t// find the cell given up.\n\tsched.Point()\n\t// cancelledRecv → wR. Only this case moves the cell out of cancelledRecv,\n\t// and the hold keeps its life: a store would do, but the write must go\n\t// through the pointer atomics (a registration), as a compare-and-swap does.\n\tif !cl.state.CompareAndSwap(stCancelledRecv, p.w) {\n\t\tpanic(\"chans: a cell a select case gave up was moved on by another\")\n\t}\n\tsched.Point() // registered again; the cell's sender may take its ticket here\n\tif c.s.Load() <= idx && !c.reclaiming.Load() {\n",
		Replace: "\tif false {\n\t\treturn false // the cell's sender has its ticket: a busy channel, where a fresh ticket serves\n\t}\n\tif !seg.hold(idx >> segShift) {\n\t\treturn false // retired, removed, or in a later life\n\t}\n\tdefer seg.release()\n\tseg.counts.Add(^uint64(cancelledRecvOne - 1)) // the cell no longer counts as given up (held: no removal)\n\tcl := seg.cell(int(idx & segMask))\n\tp.bindSelect()\n\t// After the first look: the cell's sender may take its ticket here and\n\t// find the cell given up.\n\tsched.Point()\n\t// cancelledRecv → wR. Only this case moves the cell out of cancelledRecv,\n\t// and the hold keeps its life: a store would do, but the write must go\n\t// through the pointer atomics (a registration), as a compare-and-swap does.\n\tif !cl.state.CompareAndSwap(stCancelledRecv, p.w) {\n\t\tpanic(\"chans: a cell a select case gave up was moved on by another\")\n\t}\n\tsched.Point() // registered again; the cell's sender may take its ticket here\n\tif !c.reclaiming.Load() {\n",
		What:    "rejoin: a select takes its given-up cell back even after the cell's sender took its ticket and went past it",
	},
	{
		ID:      "rejoin-no-second-look",
		Rule:    ruleRejoin,
		File:    "bounded.go",
		Find:    "\tif c.s.Load() <= idx && !c.reclaiming.Load() {\n\t\tkickPending",
		Replace: "\tif !c.reclaiming.Load() {\n\t\tkickPending",
		What:    "rejoin: no look at S after the cell is taken back; a sender that took its ticket between the first look and the move goes past the registration",
	},
	{
		ID:      "rejoin-ignores-reclaim",
		Rule:    ruleRejoin,
		File:    "bounded.go",
		Find:    "\tif c.s.Load() <= idx && !c.reclaiming.Load() {\n",
		Replace: "\tif c.s.Load() <= idx {\n",
		What:    "rejoin: a reclaim under way is not looked for; a retire whose scan saw the cell given up takes the segment with the registration in it",
	},
	{
		ID:      "rejoin-no-hold",
		Rule:    ruleRejoin,
		File:    "bounded.go",
		Find:    "\tif !seg.hold(idx >> segShift) {\n\t\treturn false // retired, removed, or in a later life\n\t}\n\tdefer seg.release()\n",
		Replace: "\tif seg.id.Load() != idx>>segShift {\n\t\treturn false\n\t}\n",
		What:    "rejoin: the segment is not held, so a cell of a removed segment, which sends no longer visit, is taken back",
	},
	{
		ID:      "rejoin-off",
		Rule:    ruleReuse,
		File:    "select.go",
		Find:    "\tif ok && rc.c.capacity == 0 { //",
		Replace: "\tif ok && rc.c.capacity == 1 { //",
		What:    "select: a receive case never takes its given-up cell back, and an idle rendezvous channel in a select loop gives up a cell per call",
	},
	{
		ID:      "batch-run-unchecked",
		Rule:    ruleSecondLook,
		File:    "batch.go",
		Find:    "func (c *Chan[T]) noSendRegs(id uint64) bool {\n",
		Replace: "func (c *Chan[T]) noSendRegs(id uint64) bool {\n\tif id > 0 {\n\t\treturn true\n\t}\n",
		What:    "noSendRegs: a receive batch skips the implicit expansions of its runs, also where a sender is parked",
	},
	{
		ID:      "expandfor-always-explicit",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "if r < c.implicitBelow() {",
		Replace: "if false && r < c.implicitBelow() {",
		What:    "expandFor: every receive ticket takes a ticket from B, also before the switch (B and settled drift from the holesOn reset)",
	},
	{
		ID:      "expandfor-always-implicit",
		Rule:    ruleImplicit,
		File:    "bounded.go",
		Find:    "if r < c.implicitBelow() {",
		Replace: "if true || r < c.implicitBelow() {",
		What:    "expandFor: every receive ticket expands implicitly, also after the switch (holes are not paid against B)",
	},
	{
		ID:      "batch-implicit-off",
		Rule:    ruleImplicit,
		File:    "batch.go",
		Find:    "\t\t\tcase t < implicit:\n",
		Replace: "\t\t\tcase t < implicit && false:\n",
		What:    "recvBatch: a receive batch's tickets take tickets from B before the switch",
	},

	// ===== Reads that sends and receives skip =====
	{
		ID:      "roomseen-past-end",
		Rule:    ruleRoom,
		File:    "bounded.go",
		Find:    "if end > seen {\n\t\tc.roomSeen.Store(end)",
		Replace: "if end > seen {\n\t\tc.roomSeen.Store(end + 1)",
		What:    "roomFor: raises roomSeen one past the end it found room below, so one send past the buffer end buffers",
	},
	{
		ID:      "roomseen-inline-le",
		Rule:    ruleRoom,
		File:    "bounded.go",
		Find:    "p.room || s < c.roomSeen.Load() ||",
		Replace: "p.room || s <= c.roomSeen.Load() ||",
		What:    "sendCell: the ticket at roomSeen (the end a send saw) counts as room",
	},
	{
		ID:      "tail-any-nothing",
		Rule:    ruleExpansion,
		File:    "bounded.go",
		Find:    "return seg.id.Load() < b>>segShift || b >= c.s.Load()&counterMask",
		Replace: "return true",
		What:    "nothingToExpand: an expansion whose bufSeg root is the tail does nothing, also where b's segment is linked and its sender parked there",
	},
	{
		ID:      "tail-id-le",
		Rule:    ruleExpansion,
		File:    "bounded.go",
		Find:    "return seg.id.Load() < b>>segShift || b >= c.s.Load()&counterMask",
		Replace: "return seg.id.Load() <= b>>segShift || b >= c.s.Load()&counterMask",
		What:    "nothingToExpand: takes b's segment for unlinked when it is the tail itself",
	},

	// ===== The inline fast paths of TrySend and TryRecv =====
	{
		ID:      "plainlyfull-ignores-close",
		Rule:    ruleClose,
		File:    "close.go",
		Find:    "\tc.plainCap.Store(0)                             // before roomEnd moves",
		Replace: "\t//c.plainCap.Store(0)                           // before roomEnd moves",
		What:    "plainlyFull: a full verdict given while a Close is under way, or after it, stands",
	},
	{
		ID:      "plainlyfull-ignores-holes",
		Rule:    ruleRoom,
		File:    "bounded.go",
		Find:    "\t\tc.plainCap.Store(0) // before holeFrom moves",
		Replace: "\t\t// c.plainCap.Store(0) // before holeFrom moves",
		What:    "plainlyFull: takes R + capacity for the buffer end after the first hole, when B is the end and may lie past it",
	},
	{
		ID:      "plainlyfull-unbounded",
		Rule:    ruleRoom,
		File:    "ops.go",
		Find:    "return pc != 0 && s+1 >= r+pc",
		Replace: "return s+1 >= r+pc",
		What:    "plainlyFull: plainCap 0 (an unbounded channel, or a Close or hole under way) counts as capacity -1, so every TrySend there fails",
	},
	{
		ID:      "plainlyempty-zero-chan",
		Rule:    ruleLinz,
		File:    "ops.go",
		Find:    "return r >= c.s.Load() && (c.sendSeg.Load() != nil || c.rb != nil)",
		Replace: "return r >= c.s.Load()",
		What:    "plainlyEmpty: a zero Chan looks empty instead of panicking",
	},

	// ===== A select's call state kept by its lead case =====
	{
		ID:      "select-state-kept-at-once",
		Rule:    rulePerf,
		File:    "select.go",
		Find:    "\tdefault:\n\t\tlead.used = true\n\t}",
		Replace: "\tdefault:\n\t\tlead.used = true\n\t\tlead.kept = sc\n\t\treturn\n\t}",
		What:    "doneWith: a case list used once keeps its state, so selects over cases built per call drain the pool and allocate a state each",
	},
	{
		ID:      "select-state-never-kept",
		Rule:    rulePerf,
		File:    "select.go",
		Find:    "\tcase lead.used:\n\t\tlead.kept = sc\n\t\treturn\n",
		Replace: "\tcase lead.used:\n",
		What:    "doneWith: a reused case list never keeps a state (every call goes through the pool)",
	},

	// ===== Waking a plain owner =====
	{
		ID:      "withdrawn-stays-blocking",
		Rule:    ruleClaim,
		File:    "bounded.go",
		Find:    "\t\town.sleep.awake() // withdrawn: no claimer will wake it\n",
		Replace: "",
		What:    "await: a waiter withdrawn on its context keeps sleep at blocking, so its next owner takes a claim for done before it came",
	},
	{
		ID:      "wake-no-token",
		Rule:    ruleClaim,
		File:    "sleep.go",
		Find:    "\tif old == sleepBlocking {\n\t\ttoken <- struct{}{}\n",
		Replace: "\tif old == sleepBlocking {\n",
		What:    "sleeper.wake: sends no token to a plain owner blocked on it (with a context)",
	},
	{
		ID:      "wake-no-ready",
		Rule:    ruleClaim,
		File:    "sleep.go",
		Find:    "\t} else {\n\t\tready(old)\n",
		Replace: "\t} else {\n",
		What:    "sleeper.wake: does not ready a plain owner parked in the runtime",
	},
	{
		ID:      "blocking-ignores-woken",
		Rule:    ruleClaim,
		File:    "sleep.go",
		Find:    "if s.state.CompareAndSwap(sleepAwake, sleepBlocking) {",
		Replace: "if s.state.Swap(sleepBlocking) != 99 {",
		What:    "sleeper.blocking: a plain owner blocks on its token although its claimer woke it without one",
	},
	{
		ID:      "parkcommit-ignores-woken",
		Rule:    ruleClaim,
		File:    "park_runtime.go",
		Find:    "return (*sleeper)(s).state.CompareAndSwap(sleepAwake, gp)",
		Replace: "(*sleeper)(s).state.Store(gp)\n\treturn true",
		What:    "parkCommit: parks in the runtime although a claimer woke the owner after its last look",
	},
	{
		ID:      "noyield-no-wait",
		Rule:    ruleClaim,
		File:    "bounded.go",
		Find:    "\tcase yieldGlobal:\n\t\truntime.Gosched()\n\t}\n",
		Replace: "\tcase yieldGlobal:\n\t\truntime.Gosched()\n\tdefault:\n\t\treturn c.result(own)\n\t}\n",
		What:    "await: with GOMAXPROCS above 2 (no yield), the owner returns as if claimed without waiting",
	},
	{
		ID:      "select-wake-token-only",
		Rule:    ruleClaim,
		File:    "waiter.go",
		Find:    "w.sel.sleep.wake(w.wake) // the select's, shared by its cases",
		Replace: "w.wake <- struct{}{}",
		What:    "wakeUp: a select's claimer sends a token without asking its sleeper, so a select parked in the runtime is never readied",
	},
	{
		ID:      "park-token-always",
		Rule:    rulePerf,
		File:    "park_runtime.go",
		Find:    "if s.state.Load() == sleepAwake {\n\t\tsched.Point() // a claimer may wake the owner here: parkCommit must see it\n\t\tgopark(parkCommit, unsafe.Pointer(s), 0, 0, 1)\n\t}",
		Replace: "if s.blocking() {\n\t\t<-token\n\t}\n\t_, _ = sched.Enabled, unsafe.Pointer(s)",
		What:    "park: blocks on the token channel, as race builds do, instead of parking in the runtime (expected harmless: performance only)",
	},

	// ===== Performance only =====
	{
		ID:      "no-spin-before-park",
		Rule:    rulePerf,
		File:    "bounded.go",
		Find:    "return spinLoads(cl, st, int(c.spin))",
		Replace: "return false",
		What:    "spinWhile: never spins before registering to park (expected harmless: performance only)",
	},
	// ===== Segment reuse =====
	{
		ID:      "reuse-before-mark",
		Rule:    ruleReuse,
		File:    "segment.go",
		Find:    "\t\tcase stConsumed:\n",
		Replace: "\t\tcase stConsumed, stDone, stTaken, stBuffered:\n",
		What:    "retire: a segment is reused while receives may still read their values from it",
	},
	{
		ID:      "reuse-no-hop-check",
		Rule:    ruleReuse,
		File:    "segment.go",
		Find:    "return nid, cur.id.Load() == cid",
		Replace: "return nid, true",
		What:    "findSeg: a walk follows a next pointer read in a segment's earlier life",
	},
	{
		ID:      "reuse-cursor-one-look",
		Rule:    ruleReuse,
		File:    "segment.go",
		Find:    "if xid != retiredID && c.cursor.Load() == x && x.id.Load() == xid {",
		Replace: "if xid != retiredID {",
		What:    "cursorSeg: a segment read from the cursor, then reused at the tail, is taken for the cursor's",
	},
	{
		ID:      "reuse-receives-keep-cursor",
		Rule:    ruleReuse,
		File:    "segment.go",
		Find:    "if root == &c.recvSeg {",
		Replace: "if false {",
		What:    "findAndMove: only grows move the cursor, so a received burst's segments stay alive",
	},
	{
		ID:      "reuse-hole-paid-final",
		Rule:    ruleReuse,
		File:    "segment.go",
		Find:    "\t\tcase stCancelledRecv, stHoleSeen:\n",
		Replace: "\t\tcase stCancelledRecv, stHoleSeen, stHolePaid:\n",
		What:    "retire: a paid hole counts as final before its receiver has met it, so that receive can lose its settle",
	},
	{
		ID:      "reuse-hold-no-life",
		Rule:    ruleReuse,
		File:    "segment.go",
		Find:    "if id == retiredID || !s.tryRef() {",
		Replace: "if !s.tryRef() {",
		What:    "hold: a segment published without its id yet is held under retiredID, and Len's walk skips its values",
	},
	{
		ID:      "reuse-len-root-reused",
		Rule:    ruleReuse,
		File:    "close.go",
		Find:    "} else if sid > r>>segShift {",
		Replace: "} else if false {",
		What:    "countValues: a receive root reused at the tail since R was read starts the count past R's segment",
	},
	{
		ID:      "reuse-off-at-hole",
		Rule:    ruleReuse,
		File:    "bounded.go",
		Find:    "\t\tc.plainCap.Store(0) // before holeFrom moves: plainlyFull stops at once\n",
		Replace: "\t\tc.plainCap.Store(0) // before holeFrom moves: plainlyFull stops at once\n\t\tc.reuseOff.Store(true)\n",
		What:    "holesOn: a buffered channel's first hole ends segment reuse for good (about 19 B per message from then on)",
	},
	{
		ID:      "reuse-explicit-no-hold",
		Rule:    ruleReuse,
		File:    "bounded.go",
		Find:    "\theld := id < pin\n",
		Replace: "\theld := false\n",
		What:    "expandAt: an explicit expansion acts on cell b without holding its segment, which may have been retired and reused",
	},
	{
		ID:      "reuse-registration-pins",
		Rule:    ruleReuse,
		File:    "ops.go",
		Find:    "\t	c.expandFor(t, seg, false)\n",
		Replace: "\t	c.expandFor(t, seg, out == outRegistered)\n",
		What:    "recvOp: a registration counts as pinning its segment, although Close or a select's claimer may cancel it during the expansion",
	},
	// ===== The ring's hand-off and the sleeper =====
	{
		ID:      "ring-hand-nonempty",
		Rule:    ruleRingWaiting,
		File:    "ring.go",
		Find:    "\tif rb.tail.Load() != h {\n",
		Replace: "\tif rb.tail.Load()&counterMask < h {\n",
		What:    "handDirect: a send hands its value to a parked receive while the ring still holds values, which that receive should get first",
	},
	{
		ID:      "ring-hand-closed",
		Rule:    ruleRingWaiting,
		File:    "ring.go",
		Find:    "\tif rb.tail.Load() != h {\n",
		Replace: "\tif rb.tail.Load()&counterMask != h {\n",
		What:    "handDirect: a send after Close set its bit hands its value to a parked receive and succeeds",
	},
	{
		ID:      "ring-hand-past-parked",
		Rule:    ruleRingWaiting,
		File:    "ring.go",
		Find:    "\tif rb.unbounded == nil && rb.sendq.n.Load() != 0 {\n\t\treturn false\n\t}\n\tif rb.handRecv && rb.recvq.n.Load() != 0 && rb.handDirect(v) {\n\t\treturn true\n\t}\n",
		Replace: "\tif rb.handRecv && rb.recvq.n.Load() != 0 && rb.handDirect(v) {\n\t\treturn true\n\t}\n\tif rb.unbounded == nil && rb.sendq.n.Load() != 0 {\n\t\treturn false\n\t}\n",
		What:    "sendFast: a send that starts while another is parked hands its value to a parked receive ahead of the parked send's, when a receive has just emptied the ring",
	},
	{
		ID:      "ring-hand-select",
		Rule:    ruleRingWaiting,
		File:    "ring.go",
		Find:    "\tif q.ws.len() == 0 || q.ws.front().sc != nil {\n\t\tq.mu.Unlock()\n\t\treturn false\n\t}\n\th := rb.head.Load()",
		Replace: "\tif q.ws.len() == 0 {\n\t\tq.mu.Unlock()\n\t\treturn false\n\t}\n\th := rb.head.Load()",
		What:    "handDirect: a send hands its value to a select's receive case as to a plain receive; the select is never woken and the value is lost",
	},
	{
		ID:      "ring-no-yield",
		Rule:    rulePerf,
		File:    "ring.go",
		Find:    "\tif rb.handRecv {\n\t\tyieldLocal()\n\t}\n",
		Replace: "\tif false {\n\t\tyieldLocal()\n\t}\n",
		What:    "yieldBeforePark: an operation registered on a ring made at GOMAXPROCS 1 blocks at once, and the partner that serves it has to wake it through the scheduler",
	},
	{
		ID:      "waiter-unpadded",
		Rule:    rulePerf,
		File:    "waiter.go",
		Find:    "\t_ [(cacheLine - unsafe.Sizeof(waiter{})%cacheLine) % cacheLine]byte\n",
		Replace: "\t_ [0 * unsafe.Sizeof(waiter{})]byte\n",
		What:    "lineWaiter: pooled and Handle waiters are not padded, and those of goroutines on different cores share cache lines",
	},
	{
		ID:      "selcall-order-unlined",
		Rule:    rulePerf,
		File:    "select.go",
		Find:    "\tsc.order = make([]int, 0, words)\n",
		Replace: "\tsc.order = make([]int, 0, 2)\n",
		What:    "selCall.init: a select's order array is 16 bytes, on a line with other goroutines' small variables",
	},
	{
		ID:      "wake-no-reset",
		Rule:    ruleSleeper,
		File:    "sleep.go",
		Find:    "\ts.state.Store(sleepAwake)\n\tif old == sleepBlocking {",
		Replace: "\ts.state.Store(sleepWoken)\n\tif old == sleepBlocking {",
		What:    "wake: the claimer of a blocked owner leaves the sleeper woken, and the owner has to put it back itself",
	},
}
