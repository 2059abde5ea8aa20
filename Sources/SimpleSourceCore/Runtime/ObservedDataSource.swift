// A data source fed by any AsyncSequence of sections: a database query, a server feed (CoreDataSource's role).

/// A data source whose state follows an `AsyncSequence` of sections.
///
/// Each value the sequence produces is validated and diffed against the previous state; subscribers get
/// the changes exactly as from a ``BasicDataSource``, with the same contract.
///
/// ```swift
/// let inbox = try ObservedDataSource(database.messagesBySender())   // some AsyncSequence<[Section]>
/// let subscription = await inbox.subscribe()
/// ```
///
/// - **Bad values.** A value with duplicate ids never reaches subscribers: the previous state stays, and
///   the ``DataSourceError`` is delivered on ``errors``.
/// - **Lifetime.** The source consumes the sequence in a task it owns, from `init` until the sequence
///   ends or fails, ``cancel()`` is called, or the source is deallocated (which cancels the task).
///   When the sequence ends, the source keeps its last state and its subscribers stay subscribed;
///   ``finished()`` returns the sequence's error, if it failed. Subscriptions end when the source is
///   deallocated and its task has stopped.
public final class ObservedDataSource<Section: SectionType>: DataSourceType {
  /// The error reported for a bad value.
  public typealias Error = DataSourceError<Section.ID, Section.Item.ID>

  // Guard map: nothing mutable of its own. The feed task is the only writer of `base` (an actor), in the
  // order `values` gives; errors go to a stream; readers and subscribers use `base`.
  @usableFromInline let base: BasicDataSource<Section>
  @usableFromInline let feed: Task<(any Swift.Error)?, Never>

  /// The errors of values that were rejected, in order. Keeps the newest 100 if nobody reads them.
  public let errors: AsyncStream<Error>

  // Inlinable so that the feed task, which validates and indexes every value, is specialised in the
  // client's build (see `Differ`).

  /// Starts following `values`.
  /// - Parameters:
  ///   - values: The states to follow; each replaces the previous one.
  ///   - initial: The state before the first value.
  /// - Throws: ``DataSourceError`` when `initial` has duplicate ids.
  @inlinable
  public init<Values: AsyncSequence & Sendable>(_ values: Values, initial: [Section] = []) throws(Error)
  where Values.Element == [Section] {
    let base = try BasicDataSource(sections: initial)
    let (errors, reporter) = AsyncStream.makeStream(of: Error.self, bufferingPolicy: .bufferingNewest(100))
    self.base = base
    self.errors = errors
    feed = Task.schedulable("feeding an observed source") {
      defer { reporter.finish() }
      do {
        for try await sections in values {
          do throws(Error) {
            try await base.setSections(sections)
          } catch {
            reporter.yield(error)
          }
        }
        return nil
      } catch {
        return error
      }
    }
  }

  deinit { feed.cancel() }

  /// Stops following the sequence; the source keeps its state and its subscribers.
  public func cancel() { feed.cancel() }

  /// Returns once the sequence has ended, with its error if it failed, and every value has been applied.
  public func finished() async -> (any Swift.Error)? {
    let error = await feed.value
    await base.settled()
    return error
  }

  /// The newest state.
  public var snapshot: Snapshot<Section> { get async { await base.snapshot } }

  /// The version of the newest state: one more for every value that changed something.
  public var version: Version { get async { await base.version } }

  /// The `to` of the newest batch offered to subscribers; see ``DataSourceType/offeredVersion``.
  public var offeredVersion: Version { get async { await base.offeredVersion } }

  /// The number of live subscriptions.
  public var subscriberCount: Int { base.subscriberCount }

  /// Returns the current snapshot and the batches that follow it; see ``Subscription``.
  public func subscribe(pacing: Pacing) async -> Subscription<Section> {
    await base.subscribe(pacing: pacing)
  }

  /// Resumes a subscriber from a version it holds, or resets it (G11); see ``Resumption``.
  public func subscribe(from version: Int, pacing: Pacing) async -> Resumption<Section> {
    await base.subscribe(from: version, pacing: pacing)
  }

  /// Returns once every value applied before the call has been diffed and offered to every subscriber.
  public func settled() async { await base.settled() }
}
