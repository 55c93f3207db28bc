/* The channel protocol of runtime/src/channel.cpp and the wait of runtime/src/proc.cpp, as a
 * Promela model for Spin: one producer VP sends K messages on a channel of N slots, one consumer
 * VP receives them, and an optional third party aborts the run. Checked (tests/model/check):
 *   - no message is lost, duplicated or reordered (assertions on every value received);
 *   - no lost wake-up and no deadlock: the futex sleep has no timeout here, so a wake-up the
 *     producer fails to give leaves the consumer blocked forever, an invalid end state;
 *   - the posted receive's hand-off (Posted -> Claimed -> Done, cancel back to Idle) never lets
 *     a sender write a withdrawn buffer, and the receiver always takes a completed hand-off;
 *   - an abort releases a waiting consumer.
 * Spin explores every interleaving under sequential consistency: the model checks the
 * protocol's logic; the seq_cst fences of the code (store_load_fence in Proc::wait_until and
 * Fabric::notify) are what make the real memory behave so for the sleeping/published pair.
 * Mirrors: push, push_overflow, front, take_front, try_hand_over, post, cancel_post,
 * take_posted_arrival (channel.cpp); Proc::receive and Proc::wait_until's sleep (proc.cpp);
 * Fabric::notify (machine.cpp). */

#define N 2          /* ring slots (the real ring has 16 or 64; 2 reaches "full" quickly) */
#ifndef K
#define K 4          /* messages sent */
#endif
#ifndef ABORT
#define ABORT 0      /* 1: a third party may abort the run at any moment */
#endif

#define IDLE 0
#define POSTED 1
#define CLAIMED 2
#define DONE 3

/* The ring: slot sequence words and payloads; producer and consumer positions. */
byte seq[N];
byte val[N];
byte head = 0;           /* producer */
byte consumed_seen = 0;  /* producer: the last value of consumed it read */
byte enqueued = 0;       /* producer: messages put in the ring or the overflow list */
byte consumed = 0;       /* the consumer's published position */
byte tail = 0;           /* consumer */
byte dequeued = 0;       /* consumer */
bool front_in_ring = true;
/* The overflow list (a deque under a mutex: each operation atomic) and its counter. */
chan overflow = [K] of { byte };
byte overflow_count = 0;
/* The posted receive. */
byte post_state = IDLE;
byte post_expected = 0;
byte post_val = 0;
/* The consumer's wait words; the run's abort and finish flags. */
byte wake = 0;
bool sleeping = false;
bool aborted = false;
bool finished = false;

inline notify() {       /* Fabric::notify: after publishing, wake the consumer if it sleeps */
  if
  :: sleeping -> wake++
  :: else -> skip
  fi
}

inline push(v) {        /* Channel::push and push_overflow */
  if
  :: overflow_count == 0 && head - consumed_seen >= N -> consumed_seen = consumed
  :: else -> skip
  fi;
  if
  :: overflow_count == 0 && head - consumed_seen < N ->
       val[head % N] = v; seq[head % N] = head + 1; head++; enqueued++
  :: else ->
       overflow ! v; overflow_count++; enqueued++
  fi
}

inline try_hand_over(v, delivered) {   /* Channel::try_hand_over */
  claimed = false;
  atomic {   /* the CAS Posted -> Claimed */
    if
    :: post_state == POSTED -> post_state = CLAIMED; claimed = true
    :: else -> skip
    fi
  }
  if
  :: claimed && post_expected != enqueued -> post_state = POSTED    /* not next in line */
  :: claimed && post_expected == enqueued ->
     assert(post_state == CLAIMED);   /* never into a withdrawn buffer */
     post_val = v; post_state = DONE; delivered = true
  :: else -> skip
  fi
}

/* Channel::front: whether a message is there; sets front_in_ring. */
inline front(there) {
  if
  :: seq[tail % N] == tail + 1 -> front_in_ring = true; there = true
  :: else ->
     if
     :: overflow_count == 0 -> there = false
     :: else ->
        if
        :: seq[tail % N] == tail + 1 -> front_in_ring = true
        :: else -> front_in_ring = false
        fi;
        there = true
     fi
  fi
}

inline take_front(v) {  /* Channel::take_front */
  if
  :: front_in_ring -> v = val[tail % N]; tail++; consumed = tail
  :: else -> overflow ? v; overflow_count--
  fi;
  dequeued++
}

proctype producer() {
  byte i = 1;
  bool delivered, claimed;
  do
  :: i <= K ->
     delivered = false;
     if   /* a large message tries the hand-over (any may be large: both choices explored) */
     :: try_hand_over(i, delivered);
        if   /* the bounded rendezvous: a second try if the receiver posts meanwhile */
        :: !delivered && post_state == POSTED -> try_hand_over(i, delivered)
        :: else -> skip
        fi
     :: skip
     fi;
     if
     :: !delivered -> push(i)
     :: else -> skip
     fi;
     notify();
     i++
  :: else -> break
  od;
  /* Fabric::finish also wakes the VPs that wait; leaving that out here keeps every message's
   * own notify on trial: a lost wake-up leaves the consumer asleep for good. */
  finished = true
}

proctype consumer() {
  byte i = 1, v, ticket;
  bool there, posted, ready;
  do
  :: i <= K ->
     posted = false;
     front(there);
     if
     :: there -> take_front(v); assert(v == i); goto received
     :: else -> skip
     fi;
     if   /* a large receive posts its buffer (both choices explored) */
     :: post_expected = dequeued; post_state = POSTED; posted = true
     :: skip
     fi;
     /* Proc::wait_until's sleep: ticket, flag, fence, check, futex wait (no timeout here). */
     do
     :: ticket = wake;
        sleeping = true;
        front(there);
        ready = there || (posted && post_state == DONE);
        if
        :: ready -> sleeping = false; break
        :: !ready && aborted -> sleeping = false; break
        :: !ready && !aborted && finished ->
           front(there);
           ready = there || (posted && post_state == DONE);
           assert(ready || aborted);   /* the producer sent all K: a finished peer left them */
           sleeping = false; break
        :: !ready && !aborted && !finished ->
           (wake != ticket);            /* futex_wait(wake, ticket): blocks until woken */
           sleeping = false
        fi
     od;
     if
     :: posted ->
        if
        :: post_state == DONE -> assert(post_val == i); post_state = IDLE; goto received
        :: else -> skip
        fi;
        /* cancel_post: withdraw, unless a sender claimed it (then its copy completes). */
        do
        :: atomic { post_state == POSTED -> post_state = IDLE; break }
        :: atomic { post_state == DONE -> assert(post_val == i); post_state = IDLE; goto received }
        :: post_state == CLAIMED -> skip   /* spin until the sender decides */
        od
     :: else -> skip
     fi;
     if
     :: aborted -> goto end_consumer
     :: else -> skip
     fi;
     front(there);
     assert(there);
     take_front(v);
     assert(v == i);
received:
     i++
  :: else -> break
  od;
  assert(post_state == IDLE);
end_consumer:
  skip
}

proctype aborter() {    /* Fabric::fail: set the flag, wake every VP */
  aborted = true;
  wake++
}

init {
  atomic {
    run producer();
    run consumer();
    if
    :: ABORT -> run aborter()
    :: else -> skip
    fi
  }
}
