$ORIGIN example.com.
$TTL 3600
example.com. 3600 IN SOA watched.dns.svc.cluster.local. hostmaster.example.com. 1 300 60 1209600 60 ; content sha256:77d9f4716c7455d4c01c00177a33af0babebcd039377816b872a06baf4123e8e
example.com. 3600 IN NS watched.dns.svc.cluster.local.
ns1.example.com. 3600 IN A 192.0.2.53
