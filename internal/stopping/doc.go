// Package stopping holds a sweep's rules of when to stop and what to
// measure next, as pure functions of the plan, the records so far and
// the time left; internal/stats gives them their statistics.
//
//   - Converge (-reps auto): another round of a block while a ratio to
//     standalone is wider than the bound, up to the design's most.
//   - FitBudget and NextRound (-budget, rounds): the run length and first
//     rounds that fit the budget, then the round that buys the most
//     precision in the time left.
//   - FitPaired and NextPairs (-budget, -design paired): the pilot pairs
//     that fit, then the next pairs of the widest ratio.
package stopping
