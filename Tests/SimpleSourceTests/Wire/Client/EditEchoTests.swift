// A client's own edit, echoed: the server's batch that carries an edit the client already shows, and the
// confirmation after it, publish nothing on the client and invalidate no row a second time.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@MainActor
@Suite("A client's edit, echoed", .timeLimit(.minutes(30)))
struct EditEchoTests {
  @Test("edit, echo and confirmation invalidate the edited row once, and the echo publishes nothing")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func echoChangesNothing() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let service = WireService(source: source, stream: "s", edits: .transactions(on: source))
    let remote = RemoteDataSource<TestSection>()
    let connection = await service.connect(remote)
    await connection.settled()
    let list = await ObservedList(following: remote, pacing: .immediate)
    let recorder = await BatchRecorder(await remote.subscribe())
    #expect(try await list.reached(await remote.version))

    let invalidations = Invalidations()
    ObservedListTests.observeEverything(list, in: invalidations)
    let id = try await remote.submit([.replace(TestItem("b", version: 1))])
    #expect(try await list.reached(await remote.version))
    #expect(invalidations.counts == ["row b": 1], "the edit, shown at once")
    #expect(await recorder.batches.count == 1)

    ObservedListTests.observeEverything(list, in: invalidations)
    _ = try await remote.answer(to: id)
    await connection.settled()
    #expect(try await list.reached(await remote.version))
    #expect(invalidations.counts == [:], "the echo and the confirmation change nothing shown")
    #expect(await recorder.showing(await remote.snapshot))
    #expect(await recorder.batches.count == 1, "no second batch for the echo")
    #expect(list.sections[0].rows[1].item.version == 1)

    // A refresh the server forces is still passed on: it is not an echo.
    ObservedListTests.observeEverything(list, in: invalidations)
    try await source.refreshItems(["c"])
    await connection.settled()
    #expect(try await list.reached(await remote.version))
    #expect(invalidations.counts == ["row c": 1], "a forced refresh reaches the row")
    await recorder.cancel()
    list.stop()
    await connection.close()
  }
}
