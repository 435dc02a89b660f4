// The simulator's pending events: a radix heap on (time, tie).
//
// Internal to the simulator library. A simulation never schedules an event before the one it is handling,
// and a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) is built for such monotone queues: an event is
// filed in the bucket named by the highest bit in which its time differs from the last time taken out, so
// adding one is a few instructions, and taking one out mostly reads bucket 0, the events due at exactly that
// time. Only when bucket 0 runs dry are the events of the lowest non-empty bucket spread over the buckets
// below it. Times are finite and non-negative, and such doubles order like their bit patterns, so buckets work
// on the bits. A binary heap cost the simulator most of its time in comparisons whose branches the event
// times make a coin toss; this has few comparisons and predictable branches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace placement {

class EventQueue {
 public:
  struct Event {
    double time;
    uint64_t tie;  // events due at the same time come out in increasing tie
  };

  bool empty() const { return size_ == 0; }
  // True while events are due at the time of the last one taken out.
  bool more_due_now() const { return !bucket_[0].empty(); }

  // `time` must be finite and no earlier than the last event taken out.
  void Push(double time, uint64_t tie) {
    const uint64_t key = Bits(time);
    const int b = Bucket(key);
    bucket_[b].push_back(Item{key, tie});
    if (b != 0) nonempty_ |= uint64_t{1} << (b - 1);
    ++size_;
  }

  // Takes out the earliest event, the one with the smallest tie among equally early ones. Ties are found by
  // a scan of bucket 0, which stays short: the simulator keeps at most one event pending per device and per
  // route.
  Event Pop() {
    if (bucket_[0].empty()) Refill();
    std::vector<Item>& now = bucket_[0];
    size_t best = 0;
    for (size_t i = 1; i < now.size(); ++i) best = now[i].tie < now[best].tie ? i : best;
    const Item item = now[best];
    now[best] = now.back();
    now.pop_back();
    --size_;
    double time;
    std::memcpy(&time, &item.key, sizeof time);
    return Event{time, item.tie};
  }

 private:
  struct Item {
    uint64_t key;  // the time's bits
    uint64_t tie;
  };

  static uint64_t Bits(double time) {
    time += 0.0;  // -0.0 becomes +0.0, whose bits order correctly
    uint64_t bits;
    std::memcpy(&bits, &time, sizeof bits);
    return bits;
  }

  // 0 for the last time taken out; else 1 + the highest bit in which key differs from it.
  int Bucket(uint64_t key) const { return key == last_ ? 0 : 64 - __builtin_clzll(key ^ last_); }

  // Moves the earliest events into bucket 0: the lowest non-empty bucket holds them, and once its minimum
  // is the new reference every other event in it differs from that minimum in a lower bit.
  void Refill() {
    const int b = 1 + __builtin_ctzll(nonempty_);
    std::vector<Item>& from = bucket_[b];
    uint64_t min = from[0].key;
    for (const Item& item : from) min = item.key < min ? item.key : min;
    last_ = min;
    for (const Item& item : from) {
      const int to = Bucket(item.key);
      bucket_[to].push_back(item);
      if (to != 0) nonempty_ |= uint64_t{1} << (to - 1);
    }
    from.clear();
    nonempty_ &= ~(uint64_t{1} << (b - 1));
  }

  std::vector<Item> bucket_[65];
  uint64_t nonempty_ = 0;  // bit b - 1 set when bucket b (1..64) holds events
  uint64_t last_ = 0;
  size_t size_ = 0;
};

}  // namespace placement
