package results

import "fmt"

// Block is the cells that share one start of the servers: one target at
// one processor value, and one upstream keepalive when the plan sweeps
// several (nginx's pools are in its configuration).
type Block struct {
	Target     string
	GOMAXPROCS int
	Keepalive  Keepalive
	Cells      []Cell
}

// In reports whether a cell belongs to the block's start of the servers.
func (b Block) In(c Cell) bool {
	return c.TargetName() == b.Target && c.GOMAXPROCS == b.GOMAXPROCS && c.Keepalive == b.Keepalive
}

// Key names the start of the servers a block needs.
func (b Block) Key() string { return fmt.Sprintf("%s/%d/%s", b.Target, b.GOMAXPROCS, b.Keepalive) }

// Blocks lists the plan in the order it runs (Cells): target, processor
// value and upstream keepalive are the outer loops because the servers
// restart for each.
func (p Plan) Blocks() []Block {
	var blocks []Block
	for _, c := range p.Cells() {
		if n := len(blocks); n == 0 || !blocks[n-1].In(c) {
			blocks = append(blocks, Block{Target: c.Target, GOMAXPROCS: c.GOMAXPROCS, Keepalive: c.Keepalive})
		}
		b := &blocks[len(blocks)-1]
		b.Cells = append(b.Cells, c)
	}
	return blocks
}
