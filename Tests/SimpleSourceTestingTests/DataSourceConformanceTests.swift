// The conformance check's own guard against hangs: it must never report a finished operation as a hang.

import SimpleSource
@testable import SimpleSourceTesting
import Testing

@Suite("DataSourceConformance's timeout guard", .timeLimit(.minutes(30)))
struct DataSourceConformanceTests {
  // The guard settles `true` before it cancels its timer, and a cancelled timer settles nothing: the other
  // order let a cancelled timer answer `false` first. That window is too narrow to hit on demand, so this
  // test checks the outcome over many runs rather than forcing the race.
  @Test("an operation that returns at once is reported as finished")
  func finishedOperationsAreNotHangs() async {
    var hangs = 0
    for _ in 0..<3_000
    where !(await DataSourceConformance<BasicDataSource<TestSection>>.finishes(within: 30) {}) {
      hangs += 1
    }
    #expect(hangs == 0)
  }

  @Test("an operation that never returns is reported once the time is up")
  func hangsAreReported() async {
    let never = HeldVersion()
    let finished = await DataSourceConformance<BasicDataSource<TestSection>>.finishes(within: 0.05) {
      _ = await never.reached(1)
    }
    #expect(!finished)
    never.finish()  // lets the abandoned operation end
  }
}
