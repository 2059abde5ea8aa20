// Longest increasing subsequence: picks the elements that stay put, so only the rest are moved.

/// Marks the elements of `keys` that form one longest strictly increasing subsequence.
///
/// The elements *not* marked are the minimal set to move so that the rest keep their relative order.
///
/// - Parameter keys: Distinct integers (old positions taken in new order).
/// - Returns: `inSequence[k] == true` for the elements of one longest increasing subsequence.
/// - Complexity: O(*k* log *k*) for *k* keys; O(*k*) when `keys` is already increasing.
@usableFromInline
func longestIncreasingSubsequence(_ keys: [Int]) -> [Bool] {
  let count = keys.count
  var inSequence = [Bool](repeating: true, count: count)
  if count < 2 { return inSequence }
  // Fast path: nothing moved relative to the rest, the common case for large lists.
  var increasing = true
  for index in 1..<count where keys[index - 1] >= keys[index] {
    increasing = false
    break
  }
  if increasing { return inSequence }

  // Patience sorting: tails[l] is the index of the smallest tail of an increasing run of length l + 1.
  var tails = [Int]()
  tails.reserveCapacity(count)
  var predecessor = [Int](repeating: -1, count: count)
  for index in 0..<count {
    let key = keys[index]
    // Fast path: a key above every tail extends the longest run (the common case in long, mostly
    // ordered lists), with no search.
    if let last = tails.last, keys[last] < key {
      predecessor[index] = last
      tails.append(index)
      continue
    }
    var low = 0
    var high = tails.count
    while low < high {
      let middle = (low + high) / 2
      if keys[tails[middle]] < key { low = middle + 1 } else { high = middle }
    }
    if low > 0 { predecessor[index] = tails[low - 1] }
    if low == tails.count { tails.append(index) } else { tails[low] = index }
  }
  for index in 0..<count { inSequence[index] = false }
  var cursor = tails.last ?? -1
  while cursor >= 0 {
    inSequence[cursor] = true
    cursor = predecessor[cursor]
  }
  return inSequence
}
