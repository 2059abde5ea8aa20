// `--quick`: every case at a small size, so that a debug build runs them all in a couple of minutes. CI
// uses it to check that each case runs and checks its own results; its timings and ratios mean nothing.

/// Whether the run was started with `--quick`.
let isQuickRun = CommandLine.arguments.contains("--quick")

/// `size`, or `quick` in a `--quick` run.
/// - Complexity: O(1).
func sized(_ size: Int, quick: Int) -> Int { isQuickRun ? quick : size }
