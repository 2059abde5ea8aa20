// Every sequence of a hub's events with several subscribers, explored: subscribers that register (from the
// newest state or resuming from an old version) and cancel between a publish's two halves (the batch made
// newest under the registry's lock, then offered to each subscriber outside it), consumers that take, and
// the source's end.

import Foundation
import SimpleSourceTesting
import SimpleSourceViews
import Testing

@testable import SimpleSourceCore

/// The states the source moves between, by version modulo three.
private let states = ["A: a", "A: a b", "A: b a'"].map { Snapshot<TestSection>(tree: snapshot($0).tree) }
private func state(_ version: Int) -> Snapshot<TestSection> { states[version % states.count] }

@Suite("Subscription hub, every sequence")
struct SubscriptionHubExhaustiveTests {
  enum Step: Hashable, CustomStringConvertible {
    /// A subscriber registers from the newest state.
    case subscribe
    /// A subscriber registers resuming from version 0, which the history may no longer retain.
    case resume
    /// The first half of a publish: the next version becomes the newest, under the registry's lock.
    case record
    /// The second half, for one subscriber: the batch is offered to the next of those registered before.
    case offer
    /// Subscriber `i` is cancelled.
    case cancel(Int)
    /// Consumer `i` takes what it is handed (a batch, a catch-up it composes, or the end).
    case take(Int)
    /// The source ends.
    case finish

    var description: String {
      switch self {
      case .subscribe: "subscribe"
      case .resume: "resume from 0"
      case .record: "record"
      case .offer: "offer"
      case .cancel(let index): "cancel \(index)"
      case .take(let index): "take \(index)"
      case .finish: "finish"
      }
    }
  }

  /// A consumer: its subscription's mailbox, the version it holds, and a list view it applies each batch to.
  final class Consumer {
    let mailbox: SubscriberMailbox<TestSection>
    var version: Int
    var view: ReferenceListView<TestSection>
    var cancelled = false
    var ended = false

    init(mailbox: SubscriberMailbox<TestSection>, version: Int, snapshot: Snapshot<TestSection>) {
      self.mailbox = mailbox
      self.version = version
      view = ReferenceListView(snapshot)
    }

    /// Whether the consumer's next request returns without parking: something is due, or it ended.
    var isDue: Bool { mailbox.state.withLock { $0.isEnded || $0.version < $0.versions.newest } }
  }

  /// The hub, the source's version, the consumers, and a publish between its halves.
  final class World {
    let hub = SubscriptionHub<TestSection>(
      version: 0, snapshot: state(0), differ: Differ(), history: HistoryLimit(versions: 2, bytes: 1 << 20),
      counter: VersionCounter())
    var version = 0
    var consumers: [Consumer] = []
    var offering: (batch: UpdateBatch<TestSection>, to: [SubscriberMailbox<TestSection>])?
    var finished = false

    static let maxConsumers = 2
    static let maxVersion = 2

    func steps() -> [Step] {
      var steps: [Step] = []
      if consumers.count < Self.maxConsumers { steps += [.subscribe, .resume] }
      if offering == nil && !finished && version < Self.maxVersion { steps.append(.record) }
      if let offering, !offering.to.isEmpty { steps.append(.offer) }
      for (index, consumer) in consumers.enumerated() where !consumer.ended {
        if !consumer.cancelled { steps.append(.cancel(index)) }
        if consumer.isDue { steps.append(.take(index)) }
      }
      if !finished && offering == nil { steps.append(.finish) }
      return steps
    }

    func perform(_ step: Step) async throws {
      switch step {
      case .subscribe, .resume:
        let registered = hub.register(step == .subscribe ? .newest : .resuming(from: 0))
        guard let (mailbox, start, held) = registered else {
          // Refused only once the source ended, or when resuming from a version the history dropped.
          if finished || (step == .resume && version >= 2) { return }
          throw ExplorationFailure(description: "\(step) refused at version \(version)")
        }
        if finished { throw ExplorationFailure(description: "registered after the end") }
        // A subscriber from the newest state starts at the newest recorded version, even in a publish's
        // middle (G5); one resuming starts where it asked.
        let expected = step == .subscribe ? version : 0
        guard start == expected, held.sections == state(start).sections else {
          throw ExplorationFailure(description: "\(step) started at \(start) (\(held)), expected \(expected)")
        }
        consumers.append(Consumer(mailbox: mailbox, version: start, snapshot: held))
      case .record:
        let batch = UpdateBatch(
          from: version, to: version + 1, changeset: Changeset(from: state(version), to: state(version + 1)))
        version += 1
        let mailboxes = hub.record(batch, edits: hub.historyEdits(of: batch), refreshing: [])
        offering = mailboxes.isEmpty ? nil : (batch, mailboxes)
      case .offer:
        guard let (batch, mailboxes) = offering, let mailbox = mailboxes.first else {
          offering = nil
          return
        }
        var later: [SubscriberMailbox<TestSection>.Deferred] = []
        _ = mailbox.publish(batch, refreshing: [], deferring: &later)
        for consumer in later { consumer.waiter.resume(returning: consumer.delivery) }
        offering = mailboxes.count == 1 ? nil : (batch, Array(mailboxes.dropFirst()))
      case .cancel(let index):
        consumers[index].cancelled = true
        hub.cancel(consumers[index].mailbox)
      case .take(let index):
        try await take(consumers[index], index)
      case .finish:
        finished = true
        hub.finish()
      }
    }

    /// Takes consumer `index`'s next delivery, checked: a batch starts at its version (G1), is not empty
    /// (G4), and applied by UIKit's rules shows the source's state at its `to` (G2, G3); the end comes only
    /// after a cancel or the source's end, and nothing comes after it.
    func take(_ consumer: Consumer, _ index: Int) async throws {
      guard let batch = await consumer.mailbox.next() else {
        guard consumer.cancelled || finished else {
          throw ExplorationFailure(description: "consumer \(index) ended, neither cancelled nor finished")
        }
        consumer.ended = true
        return
      }
      if consumer.cancelled {
        throw ExplorationFailure(description: "consumer \(index) got a batch after its cancel")
      }
      guard batch.from == consumer.version, batch.to <= version, !batch.changeset.isEmpty else {
        throw ExplorationFailure(
          description: "consumer \(index) at \(consumer.version) got \(batch.from)→\(batch.to)")
      }
      do { try consumer.view.apply(batch.changeset, refreshing: .reconfigure) } catch {
        throw ExplorationFailure(description: "consumer \(index): \(error)")
      }
      guard consumer.view.shows(state(batch.to.number).sections) else {
        throw ExplorationFailure(description: "consumer \(index) shows other than version \(batch.to)")
      }
      consumer.version = batch.to.number
    }

    /// Ends the publish in flight, then lets every consumer take what is due: one not cancelled holds the
    /// newest version (unless the source ended, when it may end first); one cancelled only ends.
    func checkSettled() async throws {
      while offering != nil { try await perform(.offer) }
      for (index, consumer) in consumers.enumerated() {
        while !consumer.ended && consumer.isDue { try await take(consumer, index) }
        if !consumer.cancelled && !finished && consumer.version != version {
          throw ExplorationFailure(
            description: "consumer \(index) holds \(consumer.version), the source \(version)")
        }
      }
    }
  }

  /// Every sequence of the steps to `SIMPLESOURCE_HUB_DEPTH` (7 by default, more in CI), each run on a new
  /// hub: up to two subscribers, two versions, the end.
  @Test("every sequence of registrations, cancels, publishes' halves, takes and the end keeps the contract")
  func everySequence() async throws {
    let depth = ProcessInfo.processInfo.environment["SIMPLESOURCE_HUB_DEPTH"].flatMap(Int.init) ?? 7
    var sequences = 0
    func explore(_ trace: [Step]) async throws {
      let world = World()
      do {
        for step in trace { try await world.perform(step) }
      } catch {
        throw ExplorationFailure(description: "after \(trace): \(error)")
      }
      let next = trace.count < depth ? world.steps() : []
      sequences += 1
      do { try await world.checkSettled() } catch {
        throw ExplorationFailure(description: "after \(trace), settling: \(error)")
      }
      for step in next { try await explore(trace + [step]) }
    }
    do { try await explore([]) } catch {
      Issue.record(error)
      return
    }
    print("Subscription hub: \(sequences) sequences to depth \(depth) kept the contract")
  }
}
