// Tests of the longest increasing subsequence that decides which elements stay and which move.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import Testing

@Suite("Longest increasing subsequence")
struct LongestIncreasingSubsequenceTests {
  @Test(
    "marks one longest increasing run",
    arguments: [
      ([], 0), ([7], 1), ([0, 1, 2, 3], 4), ([3, 2, 1, 0], 1), ([1, 2, 3, 0], 3), ([3, 0, 1, 2], 3),
      ([2, 0, 3, 1, 4], 3), ([5, 1, 6, 2, 7, 3, 8], 4),
    ] as [([Int], Int)])
  func length(keys: [Int], expected: Int) {
    let marks = longestIncreasingSubsequence(keys)
    #expect(marks.count == keys.count)
    let chosen = zip(keys, marks).filter(\.1).map(\.0)
    #expect(chosen.count == expected)
    #expect(chosen == chosen.sorted())
  }
}
