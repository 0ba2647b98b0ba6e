// The Kafka topic tool of pipelines/tools/kafka_tool.py: create topics, publish records, read a topic, with
// kafka-clients (no Python Kafka client is needed). Compiled once by `kafka_tool fetch` (javac, against the
// broker's class path). Records cross stdin/stdout framed as int64 timestamp ms (Long.MIN_VALUE: none), int32
// length, bytes; they are never printed.
import java.io.*;
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.*;

public class DpDynamicKafka {
  public static void main(String[] a) throws Exception {
    String cmd = a[0];
    Properties p = new Properties();
    p.put("bootstrap.servers", a[1]);
    if (cmd.equals("create")) {
      int partitions = Integer.parseInt(a[2]);
      try (Admin admin = Admin.create(p)) {
        List<NewTopic> topics = new ArrayList<>();
        for (int i = 3; i < a.length; i++) {
          topics.add(new NewTopic(a[i], partitions, (short) 1).configs(Map.of("retention.ms", "-1")));
        }
        Map<String, org.apache.kafka.common.KafkaFuture<Void>> made = admin.createTopics(topics).values();
        for (Map.Entry<String, org.apache.kafka.common.KafkaFuture<Void>> e : made.entrySet()) {
          try { e.getValue().get(); System.out.println(e.getKey()); }
          catch (java.util.concurrent.ExecutionException x) {
            if (!(x.getCause() instanceof TopicExistsException)) throw x;
          }
        }
      }
    } else if (cmd.equals("publish")) {
      p.put("acks", "all");
      p.put("enable.idempotence", "true");
      DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
      long n = 0;
      ByteArraySerializer ser = new ByteArraySerializer();
      try (Producer<byte[], byte[]> prod = new KafkaProducer<>(p, ser, ser)) {
        while (true) {
          long ts;
          try { ts = in.readLong(); } catch (EOFException e) { break; }
          byte[] value = new byte[in.readInt()];
          in.readFully(value);
          prod.send(new ProducerRecord<>(a[2], null, ts == Long.MIN_VALUE ? null : ts, null, value));
          n++;
        }
        prod.flush();
      }
      System.out.println(n);
    } else if (cmd.equals("consume")) {
      long max = Long.parseLong(a[3]);
      long idleMs = Long.parseLong(a[4]);
      p.put("enable.auto.commit", "false");
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out));
      ByteArrayDeserializer de = new ByteArrayDeserializer();
      try (Consumer<byte[], byte[]> c = new KafkaConsumer<>(p, de, de)) {
        List<TopicPartition> parts = new ArrayList<>();
        c.partitionsFor(a[2], Duration.ofSeconds(30)).forEach(i -> parts.add(new TopicPartition(a[2], i.partition())));
        c.assign(parts);
        c.seekToBeginning(parts);
        long n = 0, last = System.currentTimeMillis();
        while (n < max && System.currentTimeMillis() - last < idleMs) {
          ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
          if (!rs.isEmpty()) last = System.currentTimeMillis();
          for (ConsumerRecord<byte[], byte[]> r : rs) {
            byte[] v = r.value() == null ? new byte[0] : r.value();
            out.writeLong(r.timestamp());
            out.writeInt(v.length);
            out.write(v);
            n++;
          }
        }
      }
      out.flush();
    } else {
      throw new IllegalArgumentException("unknown command " + cmd);
    }
  }
}
