// The coalescing window's decision on its own (every case), and a source that coalesces under load.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

@Suite("Coalescing", .timeLimit(.minutes(30)))
struct CoalescingTests {
  // MARK: - The decision after each turn

  /// The window's decision after a turn that ended at `version` and `now`.
  func turn(_ window: inout CoalescingWindow, _ version: Int, _ now: UInt64) -> Bool {
    window.shouldCut(afterTurnAt: version, now: now)
  }

  @Test("a turn that brought no mutation ends the wait, however early")
  func emptyTurnCuts() {
    var window = CoalescingWindow(version: 7, now: 100, maximumDelay: 1_000)
    #expect(turn(&window, 7, 101))
  }

  @Test("a turn that brought mutations before the deadline lets one more turn in")
  func busyTurnWaits() {
    var window = CoalescingWindow(version: 7, now: 100, maximumDelay: 1_000)
    #expect(!turn(&window, 9, 500))
    #expect(!turn(&window, 12, 1_099), "each turn is compared with the one before it")
    #expect(turn(&window, 12, 1_099), "the first turn that brings nothing ends it")
  }

  @Test("the deadline ends the wait while mutations keep arriving")
  func deadlineCuts() {
    var window = CoalescingWindow(version: 0, now: 100, maximumDelay: 1_000)
    #expect(!turn(&window, 1, 1_099))
    #expect(turn(&window, 2, 1_100), "at the deadline")
    var late = CoalescingWindow(version: 0, now: 100, maximumDelay: 1_000)
    #expect(turn(&late, 1, 5_000), "past the deadline")
  }

  @Test("no delay cuts after the first turn, whatever it brought")
  func zeroDelayCutsAtOnce() {
    var window = CoalescingWindow(version: 3, now: 100, maximumDelay: 0)
    #expect(turn(&window, 4, 100))
  }

  @Test("a deadline past the clock's range waits only for an empty turn")
  func saturatedDeadline() {
    var window = CoalescingWindow(version: 0, now: .max - 5, maximumDelay: .max)
    #expect(window.deadline == .max)
    #expect(!turn(&window, 1, .max - 1))
    #expect(turn(&window, 1, .max - 1))
  }

  @Test("a policy counts a negative or NaN delay as none, and converts seconds to nanoseconds without a trap")
  func policy() {
    #expect(Coalescing(maximumDelay: -1).maximumDelay == 0)
    #expect(Coalescing(maximumDelay: .nan).maximumDelay == 0)
    #expect(Coalescing(maximumDelay: .infinity).nanoseconds == .max, "no trap converting to nanoseconds")
    #expect(Coalescing(maximumDelay: 1e300).nanoseconds == .max)
    #expect(Coalescing(maximumDelay: 18e9).nanoseconds == 18_000_000_000_000_000_000)
    #expect(Coalescing(maximumDelay: 0.0025).nanoseconds == 2_500_000)
    #expect(Coalescing.default.nanoseconds == 1_000_000)
    #expect(Coalescing.immediate.nanoseconds == 0)
  }

  // MARK: - A source under load

  @Test("past the deadline a cut waits one turn, however busy the writers keep the source")
  func deadlineEndsTheWait() async throws {
    // Every clock read jumps a second, past the 1 ms deadline, so each cut reads the clock twice: when it
    // opens its window and after its one turn. A source that ignored the deadline would let in turn
    // after turn while the writer keeps arriving, and read it more often.
    let reads = Locked(0)
    let clock: @Sendable () -> UInt64 = {
      reads.withLock {
        $0 += 1
        return UInt64($0) * 1_000_000_000
      }
    }
    let source = try BasicDataSource(
      sections: layout("A:"), history: .default, coalescing: .default, clock: clock)
    let recorder = await BatchRecorder(await source.subscribe())
    for index in 0..<300 { try await source.appendItems([TestItem("w\(index)")], toSection: "A") }
    await source.settled()
    await recorder.showing(await source.snapshot)
    let cuts = source.retainedVersions.count - 1  // every cut published; the first version is version 0
    #expect(source.retainedVersions.first == 0 && cuts >= 1)
    #expect(reads.withLock { $0 } == 2 * cuts, "\(cuts) cuts")
    #expect(await recorder.violations == [])
  }

  @Test("with the clock frozen, writers from 8 tasks coalesce until they stop, and every batch chains")
  func frozenClockCoalescesUntilIdle() async throws {
    // A frozen clock never reaches the deadline: the cut waits while turns bring mutations and ends at
    // the first that brings none, so nothing is lost and the source settles once the writers stop.
    let source = try BasicDataSource(
      sections: layout("A: | B:"), history: .default, coalescing: Coalescing(maximumDelay: 1e9),
      clock: { 0 })
    let recorder = await BatchRecorder(await source.subscribe())
    await withTaskGroup(of: Void.self) { group in
      for writer in 0..<8 {
        group.addTask {
          for index in 0..<100 {
            _ = try? await source.appendItems(
              [TestItem("w\(writer)-\(index)")], toSection: writer % 2 == 0 ? "A" : "B")
          }
        }
      }
    }
    await source.settled()
    #expect(await source.offeredVersion == 800)
    await recorder.showing(await source.snapshot)
    let batches = await recorder.batches
    #expect(await recorder.violations == [])
    #expect(zip(batches, batches.dropFirst()).allSatisfy { $0.to == $1.from }, "batches chain (G1)")
    #expect(batches.last?.to.number == 800)
  }
}
