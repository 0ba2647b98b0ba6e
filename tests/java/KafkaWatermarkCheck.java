// What Beam 2.62's KafkaIO does with a record's CreateTime timestamp (tests/test_kafka.py): the policy the
// pipeline's "CreateTime" read configures (TimestampPolicyFactory.withCreateTime(Duration.ZERO)), fed records
// of the given timestamps (ms) on one partition with the given backlog. Prints per record: the element
// timestamp, the watermark after it, and the reader's clock just before and just after (ms).
import java.util.Optional;
import org.apache.beam.sdk.io.kafka.KafkaRecord;
import org.apache.beam.sdk.io.kafka.KafkaTimestampType;
import org.apache.beam.sdk.io.kafka.TimestampPolicy;
import org.apache.beam.sdk.io.kafka.TimestampPolicyFactory;
import org.apache.kafka.common.TopicPartition;
import org.joda.time.Duration;
import org.joda.time.Instant;

public class KafkaWatermarkCheck {
  public static void main(String[] args) {
    TimestampPolicy<byte[], byte[]> policy =
        TimestampPolicyFactory.<byte[], byte[]>withCreateTime(Duration.ZERO)
            .createTimestampPolicy(new TopicPartition("t", 0), Optional.empty());
    final long backlog = Long.parseLong(args[0]);
    TimestampPolicy.PartitionContext ctx =
        new TimestampPolicy.PartitionContext() {
          public long getMessageBacklog() {
            return backlog;
          }

          public Instant getBacklogCheckTime() {
            return Instant.now();
          }
        };
    for (int i = 1; i < args.length; i++) {
      long ts = Long.parseLong(args[i]);
      KafkaRecord<byte[], byte[]> record =
          new KafkaRecord<>("t", 0, i, ts, KafkaTimestampType.CREATE_TIME, null, new byte[0], new byte[0]);
      long before = System.currentTimeMillis();
      Instant stamp = policy.getTimestampForRecord(ctx, record);
      Instant watermark = policy.getWatermark(ctx);
      long after = System.currentTimeMillis();
      System.out.println(stamp.getMillis() + " " + watermark.getMillis() + " " + before + " " + after);
    }
  }
}
