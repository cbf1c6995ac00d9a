import csv,collections,statistics as st,sys
o=collections.defaultdict(list)
for f in sys.argv[1:]:
    d=collections.defaultdict(dict)
    for r in csv.reader(open(f)):
        if len(r)>6 and r[1]=='raw': d[(int(r[2]),int(r[3]),r[4])][r[5]]=float(r[6])
    for (rnd,th,v),m in d.items():
        if not v.startswith('kernel'): continue
        c=v.split('/')[1]; t=(rnd-1)%4 in (1,2)
        for lv in ('lpc_uring','lpc_sync'):
            o[(th,c,lv,t)].append(d[(rnd,th,lv+'/'+c)]['mb_s']/m['mb_s'])
print("scanners call  variant    plain: median [min-max] (n)      treated: median [min-max] (n)")
for k in sorted(set(k[:3] for k in o), key=lambda k:(k[0],int(k[1][:-1]),k[2])):
    a=o[k+(False,)]; b=o[k+(True,)]
    print("%d  %5s  %-9s  %.2f [%.2f-%.2f] (%d)   %.2f [%.2f-%.2f] (%d)"%(k[0],k[1],k[2],st.median(a),min(a),max(a),len(a),st.median(b),min(b),max(b),len(b)))
