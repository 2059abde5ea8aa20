// Rates: token buckets by key (a scope, an address), refusing past the rate with the time until a retry
// is admitted.

/// A sustained rate with a burst: at most ``burst`` at once, refilled at ``perSecond``.
///
/// ```swift
/// WireLimits(subscribes: WireRate(perSecond: 2, burst: 16))  // 16 at once, then 2 a second
/// ```
public struct WireRate: Hashable, Sendable, CustomStringConvertible {
  /// How many are admitted per second, sustained; more than zero.
  public var perSecond: Double
  /// How many may be admitted at once, after a quiet spell; at least 1.
  public var burst: Int

  /// Creates a rate.
  /// - Precondition: `perSecond` is more than zero and finite; `burst` is at least 1.
  public init(perSecond: Double, burst: Int) {
    precondition(perSecond > 0 && perSecond.isFinite, "SimpleSource: a rate admits more than zero a second")
    precondition(burst >= 1, "SimpleSource: a rate's burst admits at least one")
    self.perSecond = perSecond
    self.burst = burst
  }

  /// `2/s, burst 16`.
  public var description: String {
    let rate = perSecond.rounded() == perSecond ? "\(Int(perSecond))" : "\(perSecond)"
    return "\(rate)/s, burst \(burst)"
  }
}

/// What ``WireRateBuckets`` decides for a take.
public enum WireRateDecision: Hashable, Sendable {
  /// Admitted: the tokens are (or would be) taken.
  case admitted
  /// Refused: nothing is taken; as many tokens are there after `retryAfter` seconds (rounded up to a
  /// millisecond), if no one takes them first.
  case refused(retryAfter: Double)
  /// Refused: more at once than the burst, which no wait admits.
  case overBurst
}

/// Token buckets by key, one per ``WireRate``: what a service keeps per scope and a transport per address.
///
/// Plain synchronous code with no clock of its own: every call gives the time (`now`, in seconds since
/// any fixed origin, never going back), so tests drive it step by step. A bucket that has refilled to its burst is
/// the same as no bucket, and is dropped: the buckets kept are those of keys active within the last
/// `burst / perSecond` seconds, found by a sweep whose cost is spread over the calls (amortised O(1)).
public struct WireRateBuckets<Key: Hashable & Sendable>: Sendable {
  /// A bucket's tokens at a time.
  struct Bucket: Sendable {
    var tokens: Double
    var at: Double
  }

  /// The rate every bucket keeps.
  public let rate: WireRate
  /// The buckets of the keys that are not full.
  private(set) var buckets: [Key: Bucket] = [:]
  /// Calls since the last sweep of full buckets.
  private var callsSinceSweep = 0

  /// Buckets at `rate`, every key full.
  public init(rate: WireRate) { self.rate = rate }

  /// The tokens `key` holds at `now`.
  /// - Complexity: O(1) expected.
  public func tokens(_ key: Key, now: Double) -> Double {
    guard let bucket = buckets[key] else { return Double(rate.burst) }
    return refilled(bucket, now: now)
  }

  /// Takes `count` tokens of `key` at `now`, if it holds them.
  /// - Complexity: O(1) expected, amortised.
  public mutating func take(_ count: Int = 1, for key: Key, now: Double) -> WireRateDecision {
    sweepIfDue(now: now)
    let decision = check(count, for: key, now: now)
    if decision == .admitted, count > 0 {
      buckets[key] = Bucket(tokens: tokens(key, now: now) - Double(count), at: now)
    }
    return decision
  }

  /// What ``take(_:for:now:)`` would decide, taking nothing.
  /// - Complexity: O(1) expected.
  public func check(_ count: Int = 1, for key: Key, now: Double) -> WireRateDecision {
    guard count > 0 else { return .admitted }
    guard count <= rate.burst else { return .overBurst }
    let held = tokens(key, now: now)
    let wanted = Double(count)
    guard held >= wanted else {
      // The wait until the missing tokens refill, rounded up to a millisecond so that a retry made
      // exactly then is admitted.
      let seconds = (wanted - held) / rate.perSecond
      // Less a hair of rounding error, so that a wait of exactly n ms is not told as n + 1.
      let milliseconds = (seconds * 1_000 - 1e-6).rounded(.up)
      return .refused(retryAfter: max(1, milliseconds) / 1_000)
    }
    return .admitted
  }

  /// The tokens `bucket` holds at `now`, at most the burst.
  private func refilled(_ bucket: Bucket, now: Double) -> Double {
    let elapsed = max(0, now - bucket.at)
    return min(Double(rate.burst), bucket.tokens + elapsed * rate.perSecond)
  }

  /// Drops full buckets once as many calls were made as buckets are kept: each call pays for one
  /// bucket's check, on average.
  private mutating func sweepIfDue(now: Double) {
    callsSinceSweep += 1
    guard callsSinceSweep > buckets.count else { return }
    callsSinceSweep = 0
    let burst = Double(rate.burst)
    buckets = buckets.filter { refilled($0.value, now: now) < burst }
  }

  /// How many keys hold a bucket that is not full (tests read it: the memory is bounded by the active).
  public var keptCount: Int { buckets.count }
}

/// One thing a service rates (subscribes, fresh views), per scope and per origin: both must admit, and a
/// refusal by either takes nothing from the other.
struct ScopeAndOriginRates<Scope: Hashable & Sendable>: Sendable {
  /// What is counted, in a refusal's words.
  let counted: String
  /// The limit's name and the buckets per scope; `nil` buckets: no rate.
  var scope: (limit: String, buckets: WireRateBuckets<Scope>?)
  /// The limit's name and the buckets per origin.
  var origin: (limit: String, buckets: WireRateBuckets<String>?)

  init(counted: String, scope: (String, WireRate?), origin: (String, WireRate?)) {
    self.counted = counted
    self.scope = (scope.0, scope.1.map { WireRateBuckets(rate: $0) })
    self.origin = (origin.0, origin.1.map { WireRateBuckets(rate: $0) })
  }

  /// Takes `count` tokens of `scope` and of `origin` (when there is one), or neither when either refuses.
  /// - Throws: ``WireError/Code-swift.struct/rateLimited`` with the longer retry-after of the two, plus
  ///   `jitter` of it; ``WireError/Code-swift.struct/limitReached`` for more at once than a rate's burst.
  /// - Complexity: O(1) expected, amortised.
  mutating func take(
    _ count: Int, scope key: Scope, origin address: String?, now: Double,
    jitter: (Double) -> Double
  ) throws(WireError) {
    guard count > 0 else { return }
    let checks = [
      scope.buckets.map { ("scope", scope.limit, $0.rate, $0.check(count, for: key, now: now)) },
      address.flatMap { address in
        origin.buckets.map { ("origin", origin.limit, $0.rate, $0.check(count, for: address, now: now)) }
      },
    ].compactMap { $0 }
    var refusal: (holder: String, limit: String, rate: WireRate, wait: Double)?
    for (holder, limit, rate, decision) in checks {
      switch decision {
      case .admitted: continue
      case .overBurst:
        throw WireError(
          .limitReached,
          "\(count) \(counted) at once, more than this \(holder)'s rate admits at once (\(limit): \(rate))")
      case .refused(let wait):
        if refusal.map({ $0.wait < wait }) ?? true { refusal = (holder, limit, rate, wait) }
      }
    }
    if let refusal {
      throw WireError(
        .rateLimited,
        "this \(refusal.holder) made \(counted) faster than the server allows (\(refusal.limit): \(refusal.rate))",
        retryAfter: refusal.wait + jitter(refusal.wait))
    }
    _ = scope.buckets?.take(count, for: key, now: now)
    if let address { _ = origin.buckets?.take(count, for: address, now: now) }
  }
}
