// The log's doorbell: what an instance reads from a notification before it decides to read the log.

import Testing

@testable import BoardCluster

@Suite("The log's doorbell")
struct DoorbellTests {
  @Test("a doorbell of the instance's stream names its version; any other payload is a reason to read")
  func doorbellVersion() {
    #expect(ClusterBoard.doorbellVersion("a1b2:42", stream: "a1b2") == 42)
    // A stream name may hold a colon: the version is what follows the last one.
    #expect(ClusterBoard.doorbellVersion("board:2026:7", stream: "board:2026") == 7)
    #expect(ClusterBoard.doorbellVersion("other:42", stream: "a1b2") == nil)
    #expect(ClusterBoard.doorbellVersion("a1b2:", stream: "a1b2") == nil)
    #expect(ClusterBoard.doorbellVersion("a1b2:4x", stream: "a1b2") == nil)
    #expect(ClusterBoard.doorbellVersion("a1b2", stream: "a1b2") == nil)
    #expect(ClusterBoard.doorbellVersion("", stream: "") == nil)
  }
}
