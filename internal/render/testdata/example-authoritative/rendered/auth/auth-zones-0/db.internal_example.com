$ORIGIN example.com.
$TTL 3600
example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 1 300 60 1209600 60 ; content sha256:0470b00736c4768f0489a6626654df577cc32a66ec00927376d58bfa728ab9c1
example.com. 3600 IN A 192.0.2.10
example.com. 3600 IN NS ns1.example.com.
intranet.example.com. 3600 IN A 192.0.2.20
ns1.example.com. 3600 IN A 192.0.2.53
www.example.com. 3600 IN A 192.0.2.10
